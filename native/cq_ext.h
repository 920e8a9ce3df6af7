// What cq_ext.cc needs of cq.cc: a JS NativeCq around a CQ made elsewhere.
#pragma once

#include "common.h"

namespace rdma_interop {

/// A new JS NativeCq adopting `cq` (cq.cc).
Napi::Object NewCqObject(Napi::Env env, const CqPtr &cq);

}  // namespace rdma_interop
