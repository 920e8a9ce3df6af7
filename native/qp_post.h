// Posting parsed send requests (work_request.h) on a QP, each list with one doorbell:
// the legacy ibv_post_send chain and the ibv_wr_* path (ibv_wr_start .. ibv_wr_complete).
#pragma once

#include <string>
#include <vector>

#include "qp_handle.h"
#include "work_request.h"

namespace rdma_interop {

/// Back end 1: one ibv_post_send for the chain `list.BuildChain()` made. A refusal throws
/// a VerbsError naming the refused request; the requests before it were posted (the
/// verbs contract), also when this layer refuses an inline request the provider would
/// read from a wrong address.
void PostSendChain(Napi::Env env, const QpHandle &h, const std::string &device, SendList &list);

/// Back end 2: the parsed requests of `list` through ibv_wr_start .. ibv_wr_complete
/// (extended QPs only): all or nothing, every request checked before the list is started.
void PostExRequests(Napi::Env env, const QpHandle &h, const std::string &device, SendList &list);

}  // namespace rdma_interop
