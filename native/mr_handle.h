// The handle of a memory region (mr.cc), shared with ibv_rereg_mr (mr_rereg.cc), which
// moves it to another PD and swaps its memory.
#pragma once

#include <cstdlib>

#include "common.h"

namespace rdma_interop {

/// Page-aligned memory allocated by the addon (the device pins whole pages anyway).
struct OwnedMemory {
  void *data = nullptr;
  size_t length = 0;
  ~OwnedMemory() { std::free(data); }
};
using MemoryPtr = std::shared_ptr<OwnedMemory>;

struct MrHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kMr;
  ibv_mr *mr = nullptr;
  PdPtr pd;
  MemoryPtr memory;  // set for addon-owned memory; released after the deregistration
  /// Deregisters and forgets the range in the PD's table; on failure the registration
  /// (and so the range and the memory) stays.
  int Deregister() {
    if (mr == nullptr) return 0;
    uint32_t lkey = mr->lkey;
    int ret = ibv_dereg_mr(mr);
    if (ret != 0) return ret;
    mr = nullptr;
    pd->mrs.erase(lkey);
    return 0;
  }
  int Destroy() override { return Deregister(); }
  bool Live() const override { return mr != nullptr; }
  ~MrHandle() override { Deregister(); }
};

/// ibv_rereg_mr on `h` (mr_rereg.cc): info = (flags, pd, buffer, access) as NativeMr.rereg
/// takes them. On success the handle is moved to the new PD (its children list and range
/// table) and `*view` is set to the new memory's Buffer when the translation changed;
/// returns { lkey, rkey, addr, length }. On failure a VerbsError, nothing changed here.
Napi::Object RereqMr(const Napi::CallbackInfo &info, const std::shared_ptr<MrHandle> &h,
                     Napi::Object *view);

}  // namespace rdma_interop
