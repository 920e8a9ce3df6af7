// IBTA 1.5 FLUSH through libibverbs' ibv_wr_flush, which arrived in rdma-core 45, while
// the addon builds against Debian bookworm's rdma-core 44 headers (no IBV_WR_FLUSH, no
// wr_flush member in struct ibv_qp_ex). rdma-core 45 appended one member to the end of
// struct ibv_qp_ex (after wr_atomic_write) and nothing else moved, so the struct below
// mirrors the 45+ layout. It is only ever read through a QP whose provider ACCEPTED
// IBV_QP_EX_WITH_FLUSH at ibv_create_qp_ex: a provider that knows that flag is built
// with the 45+ layout (provider and libibverbs come from one rdma-core build), so the
// member exists; a 44 provider refuses the flag and the QP is never created. Names and
// values come from rdma-core's libibverbs/verbs.h (>= 45); the addon exports them as the
// constants group RDMA_CORE_45 and test/host/verbs/flush-constants.test.ts checks them
// against that header.
#pragma once

#include "common.h"

namespace rdma_interop {
namespace flush {

constexpr uint32_t kWrFlush = 14;                 // IBV_WR_FLUSH
constexpr uint32_t kWcFlush = 8;                  // IBV_WC_FLUSH
constexpr uint64_t kQpExWithFlush = 1ull << 11;   // IBV_QP_EX_WITH_FLUSH
constexpr uint32_t kAccessFlushGlobal = 1u << 8;      // IBV_ACCESS_FLUSH_GLOBAL
constexpr uint32_t kAccessFlushPersistent = 1u << 9;  // IBV_ACCESS_FLUSH_PERSISTENT
constexpr uint8_t kPlacementGlobal = 1u << 0;      // IBV_FLUSH_GLOBAL
constexpr uint8_t kPlacementPersistent = 1u << 1;  // IBV_FLUSH_PERSISTENT
constexpr uint8_t kSelectivityRange = 0;           // IBV_FLUSH_RANGE
constexpr uint8_t kSelectivityMr = 1;              // IBV_FLUSH_MR

/// struct ibv_qp_ex of rdma-core >= 45: the 44 struct plus wr_flush at its end.
struct QpEx45 {
  ibv_qp_ex base;
  void (*wr_flush)(ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len, uint8_t type,
                   uint8_t level);
};

/// The version of the libibverbs this process loaded ("56.1", from the real file name
/// libibverbs.so.1.14.56.1), or "" when it cannot be told.
std::string LibraryVersion();

/// True when the loaded libibverbs is rdma-core 45 or later (has ibv_wr_flush).
bool LibraryHasFlush();

/// True when `q` was created with IBV_QP_EX_WITH_FLUSH on a libibverbs >= 45 (so the 45+
/// layout is certain) and the provider filled wr_flush.
inline bool Available(const ibv_qp_ex *q, uint64_t sendOps) {
  if ((sendOps & kQpExWithFlush) == 0 || !LibraryHasFlush()) return false;
  return reinterpret_cast<const QpEx45 *>(q)->wr_flush != nullptr;
}

/// ibv_wr_flush (rdma-core >= 45); only after Available() said yes.
inline void Post(ibv_qp_ex *q, uint32_t rkey, uint64_t remoteAddr, size_t len, uint8_t type,
                 uint8_t level) {
  reinterpret_cast<QpEx45 *>(q)->wr_flush(q, rkey, remoteAddr, len, type, level);
}

/// The constants above by their C names (exported as constants.RDMA_CORE_45).
Napi::Object Constants(Napi::Env env);

}  // namespace flush

/// Exports rdmaCore45Constants and libibverbsVersion().
void RegisterFlush(Napi::Env env, Napi::Object exports);

}  // namespace rdma_interop
