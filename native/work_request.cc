// Work requests read from the packed words (work_request.h): every field and every length
// checked before the list is handed to a post, so that bad input never leaves a
// half-posted list behind.
#include "work_request.h"

#include <arpa/inet.h>

#include "flush.h"

namespace rdma_interop {

namespace {

uint64_t U64At(const uint32_t *w, size_t at) {
  uint64_t v;
  std::memcpy(&v, w + at, sizeof v);
  return v;
}

// The `numSge` SGEs packed as sge_word from `w + at` into `out`.
void UnpackSges(const uint32_t *w, size_t at, uint32_t numSge, std::vector<ibv_sge> &out) {
  out.resize(numSge);
  for (uint32_t k = 0; k < numSge; k++) {
    size_t s = at + k * sge_word::kCount;
    out[k].addr = U64At(w, s + sge_word::kAddr);
    out[k].length = w[s + sge_word::kLength];
    out[k].lkey = w[s + sge_word::kLkey];
  }
}

std::string RequestField(uint32_t i, const char *field) {
  return "wrs[" + std::to_string(i) + "]" + field;
}

// The handle at `index` of the JS array `handles` (a VerbsArgumentError naming request `i`
// when there is none).
Napi::Value HandleAt(Napi::Env env, const Napi::Value &handles, uint32_t index, uint32_t i) {
  if (!handles.IsArray() || index >= handles.As<Napi::Array>().Length())
    ThrowArgument(env, RequestField(i, ".handle"), "names no entry of the handle list");
  return handles.As<Napi::Array>().Get(index);
}

}  // namespace

void ThrowRefused(Napi::Env env, const char *call, const std::string &device, int ret, long index,
                  const char *what) {
  ThrowVerbs(env, call, device, ret > 0 ? ret : -ret,
             std::string(what) + " #" + std::to_string(index) + " refused", static_cast<int>(index));
}

Napi::Uint32Array WordsArgument(Napi::Env env, const Napi::Value &v, const char *call) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowArgument(env, "words", std::string(call) + " needs a Uint32Array");
  return v.As<Napi::Uint32Array>();
}

// ---------------------------------------------------------------- receive

void RecvChain::Unpack(Napi::Env env, const Napi::Value &v, const Napi::Value &countValue) {
  auto words = WordsArgument(env, v, "postRecv");
  const uint32_t *w = words.Data();
  size_t len = words.ElementLength();
  uint32_t n = ReadU32(countValue, "count", 0xffff);
  wrs.assign(n, ibv_recv_wr{});
  if (sges.size() < n) sges.resize(n);
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (len < at + recv_word::kCount) ThrowArgument(env, "words", "shorter than the count of requests it should hold");
    uint32_t numSge = w[at + recv_word::kNumSge];
    if ((len - at - recv_word::kCount) / sge_word::kCount < numSge)
      ThrowArgument(env, "words", "an SGE count runs past the end");
    wrs[i].wr_id = U64At(w, at + recv_word::kWrId);
    UnpackSges(w, at + recv_word::kCount, numSge, sges[i]);
    at += recv_word::kCount + static_cast<size_t>(numSge) * sge_word::kCount;
  }
  for (uint32_t i = 0; i < n; i++) {
    wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
    wrs[i].num_sge = static_cast<int>(sges[i].size());
    wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
  }
}

void RecvChain::Check(Napi::Env env, const char *call, const std::string &device, int ret,
                      ibv_recv_wr *bad) {
  if (ret == 0) return;
  ThrowRefused(env, call, device, ret, bad != nullptr ? bad - wrs.data() : 0, "receive request");
}

// ---------------------------------------------------------------- send

size_t SendList::Parse(Napi::Env env, const uint32_t *w, size_t len, uint32_t n, const Napi::Value &handles) {
  using namespace send_word;
  Forget();
  if (reqs.size() < n) reqs.resize(n);
  count = 0;
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (len < at + kCount) ThrowArgument(env, "words", "shorter than the count of requests it should hold");
    const uint32_t *r = w + at;
    uint32_t numSge = r[kNumSge];
    if (r[kOpcode] > 255) ThrowArgument(env, RequestField(i, ".opcode"), "must be in [0, 255]");
    if ((len - at - kCount) / sge_word::kCount < numSge)
      ThrowArgument(env, "words", "an SGE count runs past the end");
    if (r[kFlushType] > 0xff || r[kFlushLevel] > 0xff)
      ThrowArgument(env, RequestField(i, ""), "flushType and flushLevel must fit in 8 bits");
    if (r[kRemoteQpn] > 0xffffff) ThrowArgument(env, RequestField(i, ".remoteQpn"), "must be in [0, 16777215]");
    SendRequest &p = reqs[i];
    p.wrId = U64At(w, at + kWrId);
    p.opcode = r[kOpcode];
    p.flags = r[kSendFlags];
    p.remoteAddr = U64At(w, at + kRemoteAddr);
    p.rkey = r[kRkey];
    p.compareAdd = U64At(w, at + kCompareAdd);
    p.swap = U64At(w, at + kSwap);
    p.imm = r[kImmData];
    p.atomicValue = U64At(w, at + kAtomicValue);
    p.flushLength = U64At(w, at + kFlushLength);
    p.flushType = r[kFlushType];
    p.flushLevel = r[kFlushLevel];
    p.invalidateRkey = r[kInvalidateRkey];
    p.remoteQpn = r[kRemoteQpn];
    p.remoteQkey = r[kRemoteQkey];
    p.bindRkey = r[kBindRkey];
    p.bindInfo = ibv_mw_bind_info{};
    UnpackSges(w, at + kCount, numSge, p.sges);
    // The objects it names, from the handle list: a BIND_MW's window and MR (never a NULL
    // window to the provider), or a UD destination's AH.
    uint32_t handle = r[kHandle];
    if (p.opcode == IBV_WR_BIND_MW) {
      if (handle == 0) ThrowArgument(env, RequestField(i, ".handle"), "BIND_MW names its window and MR");
      named = true;
      p.mw = MwFromJs(HandleAt(env, handles, handle - 1, i), "ibv_post_send");
      MrRef mr = MrRefFromJs(HandleAt(env, handles, handle, i), "ibv_post_send");
      p.bindMr = mr.owner;
      p.bindInfo.mr = mr.mr;
      p.bindInfo.addr = U64At(w, at + kBindAddr);
      p.bindInfo.length = U64At(w, at + kBindLength);
      p.bindInfo.mw_access_flags = r[kBindAccess];
    } else if (handle != 0) {
      named = true;
      p.ah = AhFromJs(HandleAt(env, handles, handle - 1, i), "ibv_post_send");
    }
    count = i + 1;
    at += kCount + static_cast<size_t>(numSge) * sge_word::kCount;
  }
  return at;
}

void SendList::BuildChain() {
  wrs.assign(count, ibv_send_wr{});
  for (uint32_t i = 0; i < count; i++) {
    SendRequest &p = reqs[i];
    ibv_send_wr &wr = wrs[i];
    wr.wr_id = p.wrId;
    wr.opcode = static_cast<ibv_wr_opcode>(p.opcode);
    wr.send_flags = p.flags;
    wr.sg_list = p.sges.empty() ? nullptr : p.sges.data();
    wr.num_sge = static_cast<int>(p.sges.size());
    wr.next = i + 1 < count ? &wrs[i + 1] : nullptr;
    wr.imm_data = htonl(p.imm);  // the wire carries it big-endian
    switch (p.opcode) {
      case IBV_WR_ATOMIC_CMP_AND_SWP:
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        wr.wr.atomic.remote_addr = p.remoteAddr;
        wr.wr.atomic.rkey = p.rkey;
        wr.wr.atomic.compare_add = p.compareAdd;
        wr.wr.atomic.swap = p.swap;
        break;
      case IBV_WR_LOCAL_INV:
      case IBV_WR_SEND_WITH_INV:
        // invalidate_rkey shares its union with imm_data (host order, not on the wire as is).
        wr.invalidate_rkey = p.invalidateRkey;
        break;
      case IBV_WR_BIND_MW:
        wr.bind_mw.mw = p.mw->mw;
        wr.bind_mw.rkey = p.bindRkey;
        wr.bind_mw.bind_info = p.bindInfo;
        break;
      default:
        wr.wr.rdma.remote_addr = p.remoteAddr;
        wr.wr.rdma.rkey = p.rkey;
        break;
    }
    if (p.ah) {
      // UD: the union's ud member replaces rdma/atomic (SEND and SEND_WITH_IMM only).
      wr.wr.ud.ah = p.ah->ah;
      wr.wr.ud.remote_qpn = p.remoteQpn;
      wr.wr.ud.remote_qkey = p.remoteQkey;
    }
  }
}

void SendList::Forget() {
  if (!named) return;
  for (SendRequest &p : reqs) {
    p.ah.reset();
    p.mw.reset();
    p.bindMr.reset();
  }
  named = false;
}

}  // namespace rdma_interop
