// Work requests read from JS objects or packed words (work_request.h): every field and
// every length checked before the list is handed to a post, so that bad input never
// leaves a half-posted list behind.
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

// The JS list of requests `v` (a VerbsArgumentError naming `wrs` unless an array).
Napi::Array RequestList(Napi::Env env, const Napi::Value &v, const char *what) {
  if (!v.IsArray()) ThrowArgument(env, "wrs", what);
  return v.As<Napi::Array>();
}

// The object a JS list holds at `i`, or a VerbsArgumentError naming wrs[i].
Napi::Object RequestAt(Napi::Env env, const Napi::Array &arr, uint32_t i, const char *what) {
  Napi::Value e = arr.Get(i);
  if (!e.IsObject()) ThrowArgument(env, "wrs[" + std::to_string(i) + "]", what);
  return e.As<Napi::Object>();
}

void CheckFlushFields(Napi::Env env, uint32_t i, const ExRequest &p) {
  if (p.flushType > 0xff || p.flushLevel > 0xff)
    ThrowArgument(env, "wrs[" + std::to_string(i) + "]", "flushType and flushLevel must fit in 8 bits");
}

}  // namespace

void ThrowRefused(Napi::Env env, const char *call, const std::string &device, int ret, long index,
                  const char *what) {
  ThrowVerbs(env, call, device, ret > 0 ? ret : -ret,
             std::string(what) + " #" + std::to_string(index) + " refused", static_cast<int>(index));
}

void ReadSges(const Napi::Value &v, std::vector<ibv_sge> &out) {
  if (v.IsUndefined()) return;
  if (!v.IsArray()) ThrowArgument(v.Env(), "sgList", "must be an array");
  Napi::Array arr = v.As<Napi::Array>();
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value e = arr.Get(i);
    if (!e.IsObject()) ThrowArgument(v.Env(), "sgList[" + std::to_string(i) + "]", "an SGE must be an object");
    Napi::Object o = e.As<Napi::Object>();
    ibv_sge s{};
    s.addr = ReadU64(o.Get("addr"), "sge.addr");
    s.length = ReadU32(o.Get("length"), "sge.length");
    s.lkey = ReadU32(o.Get("lkey"), "sge.lkey");
    out.push_back(s);
  }
}

void ReadBindInfo(Napi::Env env, const Napi::Value &v, ibv_mw_bind_info &out,
                  std::vector<std::shared_ptr<ResourceHandle>> &keep) {
  if (!v.IsObject()) ThrowArgument(env, "bind", "must be { mr, addr, length, access }");
  Napi::Object o = v.As<Napi::Object>();
  MrRef mr = MrRefFromJs(o.Get("mr"), "ibv_bind_mw");
  keep.push_back(mr.owner);
  out.mr = mr.mr;
  out.addr = ReadU64(o.Get("addr"), "bind.addr");
  out.length = ReadU64(o.Get("length"), "bind.length");
  out.mw_access_flags = ReadU32(o.Get("access"), "bind.access");
}

// ---------------------------------------------------------------- receive

void RecvChain::Parse(Napi::Env env, const Napi::Value &v) {
  Napi::Array arr = RequestList(env, v, "expected an array of receive requests");
  uint32_t n = arr.Length();
  wrs.assign(n, ibv_recv_wr{});
  sges.assign(n, {});
  for (uint32_t i = 0; i < n; i++) {
    Napi::Object o = RequestAt(env, arr, i, "a receive request must be an object");
    wrs[i].wr_id = ReadU64(o.Get("wrId"), "wrId");
    ReadSges(o.Get("sgList"), sges[i]);
  }
  LinkRequests(wrs, sges);
}

void RecvChain::Unpack(Napi::Env env, const Napi::Value &v, const Napi::Value &countValue) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowArgument(env, "words", "postRecvPacked needs a Uint32Array");
  auto words = v.As<Napi::Uint32Array>();
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
  LinkRequests(wrs, sges);
}

void RecvChain::Check(Napi::Env env, const char *call, const std::string &device, int ret,
                      ibv_recv_wr *bad) {
  if (ret == 0) return;
  ThrowRefused(env, call, device, ret, bad != nullptr ? bad - wrs.data() : 0, "receive request");
}

// ---------------------------------------------------------------- send

void SendChain::Parse(Napi::Env env, const Napi::Value &v) {
  Napi::Array arr = RequestList(env, v, "expected an array of work requests");
  uint32_t n = arr.Length();
  wrs.assign(n, ibv_send_wr{});
  sges.assign(n, {});
  for (uint32_t i = 0; i < n; i++) {
    Napi::Object o = RequestAt(env, arr, i, "a work request must be an object");
    ibv_send_wr &wr = wrs[i];
    wr.wr_id = ReadU64(o.Get("wrId"), "wrId");
    wr.opcode = static_cast<ibv_wr_opcode>(ReadU32(o.Get("opcode"), "opcode", 255));
    wr.send_flags = ReadU32Prop(o, "sendFlags", 0);
    ReadSges(o.Get("sgList"), sges[i]);
    wr.imm_data = htonl(ReadU32Prop(o, "immData", 0));  // the wire carries it big-endian
    switch (wr.opcode) {
      case IBV_WR_ATOMIC_CMP_AND_SWP:
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        wr.wr.atomic.remote_addr = ReadU64Prop(o, "remoteAddr", 0);
        wr.wr.atomic.rkey = ReadU32Prop(o, "rkey", 0);
        wr.wr.atomic.compare_add = ReadU64Prop(o, "compareAdd", 0);
        wr.wr.atomic.swap = ReadU64Prop(o, "swap", 0);
        break;
      case IBV_WR_LOCAL_INV:
      case IBV_WR_SEND_WITH_INV:
        // invalidate_rkey shares its union with imm_data (host order, not on the wire as is).
        wr.invalidate_rkey = ReadU32Prop(o, "invalidateRkey", 0);
        break;
      case IBV_WR_BIND_MW: {
        MwPtr mw = MwFromJs(o.Get("mw"), "ibv_post_send");
        keep.push_back(mw);
        wr.bind_mw.mw = mw->mw;
        wr.bind_mw.rkey = ReadU32(o.Get("bindRkey"), "bindRkey");
        ReadBindInfo(env, o.Get("bindInfo"), wr.bind_mw.bind_info, keep);
        break;
      }
      default:
        wr.wr.rdma.remote_addr = ReadU64Prop(o, "remoteAddr", 0);
        wr.wr.rdma.rkey = ReadU32Prop(o, "rkey", 0);
        break;
    }
    Napi::Value ah = o.Get("ah");
    if (!ah.IsUndefined()) {
      // UD: the union's ud member replaces rdma/atomic (SEND and SEND_WITH_IMM only).
      AhPtr handle = AhFromJs(ah, "ibv_post_send");
      ahs.push_back(handle);
      wr.wr.ud.ah = handle->ah;
      wr.wr.ud.remote_qpn = ReadU32Prop(o, "remoteQpn", 0, 0xffffff);
      wr.wr.ud.remote_qkey = ReadU32Prop(o, "remoteQkey", 0);
    }
  }
  Link();
}

void ParseExRequests(Napi::Env env, const Napi::Value &v, std::vector<ExRequest> &ps) {
  Napi::Array arr = RequestList(env, v, "expected an array of work requests");
  uint32_t n = arr.Length();
  ps = std::vector<ExRequest>(n);
  for (uint32_t i = 0; i < n; i++) {
    Napi::Object o = RequestAt(env, arr, i, "a work request must be an object");
    ExRequest &p = ps[i];
    p.wrId = ReadU64(o.Get("wrId"), "wrId");
    p.opcode = ReadU32(o.Get("opcode"), "opcode", 255);
    p.flags = ReadU32Prop(o, "sendFlags", 0);
    p.remoteAddr = ReadU64Prop(o, "remoteAddr", 0);
    p.rkey = ReadU32Prop(o, "rkey", 0);
    p.compareAdd = ReadU64Prop(o, "compareAdd", 0);
    p.swap = ReadU64Prop(o, "swap", 0);
    p.imm = ReadU32Prop(o, "immData", 0);
    p.atomicValue = ReadU64Prop(o, "atomicValue", 0);
    p.flushLength = ReadU64Prop(o, "flushLength", 0);
    p.flushType = ReadU32Prop(o, "flushType", flush::kPlacementGlobal);
    p.flushLevel = ReadU32Prop(o, "flushLevel", flush::kSelectivityRange);
    CheckFlushFields(env, i, p);
    ReadSges(o.Get("sgList"), p.sges);
    p.invalidateRkey = ReadU32Prop(o, "invalidateRkey", 0);
    p.bindRkey = 0;
    p.bindInfo = ibv_mw_bind_info{};
    if (p.opcode == IBV_WR_BIND_MW) {
      p.mw = MwFromJs(o.Get("mw"), "ibv_wr_bind_mw");
      p.bindRkey = ReadU32(o.Get("bindRkey"), "bindRkey");
      ReadBindInfo(env, o.Get("bindInfo"), p.bindInfo, p.keep);
    }
  }
}

size_t UnpackSendWords(Napi::Env env, const uint32_t *w, size_t len, uint32_t n, bool toEx,
                       SendChain &chain, std::vector<ExRequest> &ex) {
  using namespace send_word;
  if (toEx) {
    if (ex.size() < n) ex.resize(n);
  } else {
    chain.wrs.assign(n, ibv_send_wr{});
    if (chain.sges.size() < n) chain.sges.resize(n);
    chain.ahs.clear();
  }
  size_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (len < at + kCount) ThrowArgument(env, "words", "shorter than the count of requests it should hold");
    const uint32_t *r = w + at;
    uint32_t numSge = r[kNumSge];
    if (r[kOpcode] > 255) ThrowArgument(env, "wrs[" + std::to_string(i) + "].opcode", "must be in [0, 255]");
    // The window ops carry objects (the MW, the bound MR) the words cannot: they go
    // through postSend / postSendEx, never here (a NULL window would crash the provider).
    if (r[kOpcode] == IBV_WR_BIND_MW || r[kOpcode] == IBV_WR_LOCAL_INV || r[kOpcode] == IBV_WR_SEND_WITH_INV)
      ThrowArgument(env, "wrs[" + std::to_string(i) + "].opcode", "BIND_MW, LOCAL_INV and SEND_WITH_INV are not packed");
    if ((len - at - kCount) / sge_word::kCount < numSge)
      ThrowArgument(env, "words", "an SGE count runs past the end");
    UnpackSges(w, at + kCount, numSge, toEx ? ex[i].sges : chain.sges[i]);
    if (toEx) {
      ExRequest &p = ex[i];
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
      // The packed set has no window ops: drop what an earlier object-path use left.
      p.invalidateRkey = 0;
      p.bindRkey = 0;
      p.mw.reset();
      p.keep.clear();
      CheckFlushFields(env, i, p);
    } else {
      ibv_send_wr &wr = chain.wrs[i];
      wr.wr_id = U64At(w, at + kWrId);
      wr.opcode = static_cast<ibv_wr_opcode>(r[kOpcode]);
      wr.send_flags = r[kSendFlags];
      wr.imm_data = htonl(r[kImmData]);  // the wire carries it big-endian
      if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        wr.wr.atomic.remote_addr = U64At(w, at + kRemoteAddr);
        wr.wr.atomic.rkey = r[kRkey];
        wr.wr.atomic.compare_add = U64At(w, at + kCompareAdd);
        wr.wr.atomic.swap = U64At(w, at + kSwap);
      } else {
        wr.wr.rdma.remote_addr = U64At(w, at + kRemoteAddr);
        wr.wr.rdma.rkey = r[kRkey];
      }
    }
    at += kCount + static_cast<size_t>(numSge) * sge_word::kCount;
  }
  return at;
}

}  // namespace rdma_interop
