// Posting on a QP (qp_post.h): the checks the provider cannot make safely itself (inline
// data read from this process's memory, a builder the QP was not created for), then one
// doorbell for the whole list.
#include "qp_post.h"

#include <arpa/inet.h>

#include <functional>

#include "flush.h"

namespace rdma_interop {

namespace {

// Whether the ibv_wr_* builder for `opcode` exists on this extended QP.
bool ExOpAvailable(const ibv_qp_ex *q, uint64_t ops, uint32_t opcode) {
  switch (opcode) {
    case IBV_WR_RDMA_WRITE: return (ops & IBV_QP_EX_WITH_RDMA_WRITE) && q->wr_rdma_write;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM) && q->wr_rdma_write_imm;
    case IBV_WR_SEND: return (ops & IBV_QP_EX_WITH_SEND) && q->wr_send;
    case IBV_WR_SEND_WITH_IMM: return (ops & IBV_QP_EX_WITH_SEND_WITH_IMM) && q->wr_send_imm;
    case IBV_WR_RDMA_READ: return (ops & IBV_QP_EX_WITH_RDMA_READ) && q->wr_rdma_read;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) && q->wr_atomic_cmp_swp;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) && q->wr_atomic_fetch_add;
    case IBV_WR_ATOMIC_WRITE: return (ops & IBV_QP_EX_WITH_ATOMIC_WRITE) && q->wr_atomic_write;
    case flush::kWrFlush: return flush::Available(q, ops);
    case IBV_WR_LOCAL_INV: return (ops & IBV_QP_EX_WITH_LOCAL_INV) && q->wr_local_inv;
    case IBV_WR_BIND_MW: return (ops & IBV_QP_EX_WITH_BIND_MW) && q->wr_bind_mw;
    case IBV_WR_SEND_WITH_INV: return (ops & IBV_QP_EX_WITH_SEND_WITH_INV) && q->wr_send_inv;
    default: return false;
  }
}

// Inline requests make the provider copy from the SGE addresses in this process: each
// must lie in a live MR of the QP's PD, else a wrong address would crash the process.
// Returns the index of the first bad request, or -1.
long FirstBadInline(const QpHandle &h, size_t n, const std::function<uint32_t(size_t)> &flags,
                    const std::function<const std::vector<ibv_sge> &(size_t)> &sges, size_t *badSge) {
  for (size_t i = 0; i < n; i++)
    if ((flags(i) & IBV_SEND_INLINE) != 0 && !InlineSgesRegistered(*h.pd, sges(i), badSge))
      return static_cast<long>(i);
  return -1;
}

[[noreturn]] void ThrowBadInline(Napi::Env env, const char *call, const std::string &device, long index,
                                 size_t sge) {
  ThrowVerbs(env, call, device, EINVAL,
             "work request #" + std::to_string(index) + ": inline sgList[" + std::to_string(sge) +
                 "] is not inside a registered MR of this QP's PD",
             static_cast<int>(index));
}

// ibv_post_send of the chain as linked now, from its first request; a refusal thrown.
void PostLinked(Napi::Env env, const QpHandle &h, const std::string &device, SendList &list) {
  ibv_send_wr *bad = nullptr;
  int ret = ibv_post_send(h.qp, list.wrs.data(), &bad);
  if (ret != 0)
    ThrowRefused(env, "ibv_post_send", device, ret, bad != nullptr ? bad - list.wrs.data() : 0, "work request");
}

// Relinks a chain cut before request `at` when it goes out of scope (thrown or not), so
// that a prepared chain posts whole next time.
struct CutChain {
  SendList &list;
  size_t at;
  CutChain(SendList &l, size_t i) : list(l), at(i) { list.wrs[at - 1].next = nullptr; }
  ~CutChain() { list.wrs[at - 1].next = &list.wrs[at]; }
};

// Atomic Write carries its payload itself; Flush, LOCAL_INV and BIND_MW have none.
bool CarriesNoSges(uint32_t opcode) {
  return opcode == IBV_WR_ATOMIC_WRITE || opcode == flush::kWrFlush || opcode == IBV_WR_LOCAL_INV ||
         opcode == IBV_WR_BIND_MW;
}

// The ibv_wr_* builder of request `p` (ExOpAvailable checked it exists).
void BuildEx(ibv_qp_ex *q, SendRequest &p) {
  switch (p.opcode) {
    case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(q, p.rkey, p.remoteAddr); break;
    case IBV_WR_RDMA_WRITE_WITH_IMM: ibv_wr_rdma_write_imm(q, p.rkey, p.remoteAddr, htonl(p.imm)); break;
    case IBV_WR_SEND: ibv_wr_send(q); break;
    case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(q, htonl(p.imm)); break;
    case IBV_WR_RDMA_READ: ibv_wr_rdma_read(q, p.rkey, p.remoteAddr); break;
    case IBV_WR_ATOMIC_CMP_AND_SWP: ibv_wr_atomic_cmp_swp(q, p.rkey, p.remoteAddr, p.compareAdd, p.swap); break;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: ibv_wr_atomic_fetch_add(q, p.rkey, p.remoteAddr, p.compareAdd); break;
    case IBV_WR_ATOMIC_WRITE:
      // The provider copies the 8 bytes into the WQE now (host order in memory).
      ibv_wr_atomic_write(q, p.rkey, p.remoteAddr, &p.atomicValue);
      break;
    case flush::kWrFlush:
      // IBTA 1.5 FLUSH: no local data; ExOpAvailable checked the 45+ layout.
      flush::Post(q, p.rkey, p.remoteAddr, static_cast<size_t>(p.flushLength),
                  static_cast<uint8_t>(p.flushType), static_cast<uint8_t>(p.flushLevel));
      break;
    case IBV_WR_LOCAL_INV: ibv_wr_local_inv(q, p.invalidateRkey); break;
    case IBV_WR_SEND_WITH_INV: ibv_wr_send_inv(q, p.invalidateRkey); break;
    case IBV_WR_BIND_MW: ibv_wr_bind_mw(q, p.mw->mw, p.bindRkey, &p.bindInfo); break;
    default: break;  // unreachable: ExOpAvailable refused it
  }
}

}  // namespace

void PostSendChain(Napi::Env env, const QpHandle &h, const std::string &device, SendList &list) {
  if (list.count == 0) return;
  // A prepared chain outlives nothing it points at: an AH released by its PD's
  // cascading close would be a dangling pointer in the provider.
  for (uint32_t i = 0; i < list.count; i++)
    if (list.reqs[i].ah && list.reqs[i].ah->ah == nullptr)
      ThrowClosed(env, "ibv_post_send", device, "an address handle of the list");
  size_t badSge = 0;
  long badInline = FirstBadInline(
      h, list.count, [&](size_t i) { return list.wrs[i].send_flags; },
      [&](size_t i) -> const std::vector<ibv_sge> & { return list.reqs[i].sges; }, &badSge);
  if (badInline >= 0) {
    // As a provider refusing request #k does: the requests before it are posted.
    if (badInline > 0) {
      CutChain cut(list, static_cast<size_t>(badInline));
      PostLinked(env, h, device, list);
    }
    ThrowBadInline(env, "ibv_post_send", device, badInline, badSge);
  }
  PostLinked(env, h, device, list);
}

void PostExRequests(Napi::Env env, const QpHandle &h, const std::string &device, SendList &list) {
  uint32_t n = list.count;
  if (n == 0) return;
  std::vector<SendRequest> &ps = list.reqs;
  ibv_qp_ex *q = h.qpx;
  // An op the QP was not created for has no builder (a NULL function pointer in the
  // provider): refuse the whole list before starting it, never call through NULL.
  for (uint32_t i = 0; i < n; i++) {
    if (!ExOpAvailable(q, h.sendOps, ps[i].opcode))
      ThrowVerbs(env, "ibv_wr_start", device, EOPNOTSUPP,
                 "work request #" + std::to_string(i) + ": opcode " + std::to_string(ps[i].opcode) +
                     " is not among this QP's send_ops_flags",
                 static_cast<int>(i));
    if (ps[i].ah && ps[i].ah->ah == nullptr)
      ThrowClosed(env, "ibv_wr_set_ud_addr", device, "an address handle of the list");
  }
  // All or nothing on this path: a bad inline request refuses the whole list.
  size_t badSge = 0;
  long badInline = FirstBadInline(
      h, n, [&](size_t i) { return CarriesNoSges(ps[i].opcode) ? 0u : ps[i].flags; },
      [&](size_t i) -> const std::vector<ibv_sge> & { return ps[i].sges; }, &badSge);
  if (badInline >= 0) ThrowBadInline(env, "ibv_wr_set_inline_data_list", device, badInline, badSge);
  ibv_wr_start(q);
  for (uint32_t i = 0; i < n; i++) {
    SendRequest &p = ps[i];
    q->wr_id = p.wrId;
    q->wr_flags = p.flags & ~static_cast<unsigned>(IBV_SEND_INLINE);
    BuildEx(q, p);
    // A UD destination follows the builder (verbs.h: ibv_wr_set_ud_addr after ibv_wr_send).
    if (p.ah) ibv_wr_set_ud_addr(q, p.ah->ah, p.remoteQpn, p.remoteQkey);
    if (CarriesNoSges(p.opcode)) continue;
    if (p.flags & IBV_SEND_INLINE) {
      std::vector<ibv_data_buf> bufs;
      for (const ibv_sge &s : p.sges)
        bufs.push_back({reinterpret_cast<void *>(static_cast<uintptr_t>(s.addr)), s.length});
      ibv_wr_set_inline_data_list(q, bufs.size(), bufs.data());
    } else {
      ibv_wr_set_sge_list(q, p.sges.size(), p.sges.data());
    }
  }
  CheckIbv(env, "ibv_wr_complete", device, ibv_wr_complete(q));
}

}  // namespace rdma_interop
