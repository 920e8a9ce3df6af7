// Queue pair: creation (legacy ibv_create_qp, or ibv_create_qp_ex with send_ops_flags
// for the ibv_wr_* path), state transitions (ibv_modify_qp from a typed attribute
// object), query, and posting (ibv_post_send / ibv_wr_* / ibv_post_recv), each post
// list with a single doorbell. QPs made by rdma_create_qp are adopted (NewCmQpObject).
#include <arpa/inet.h>

#include <functional>
#include <map>
#include <vector>

#include "bound_call.h"
#include "clock.h"
#include "resource.h"
#include "flush.h"

namespace rdma_interop {

namespace {

struct QpHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kQp;
  ibv_qp *qp = nullptr;
  ibv_qp_ex *qpx = nullptr;  // non-null when created for the ibv_wr_* API
  uint64_t sendOps = 0;      // the IBV_QP_EX_WITH_* flags it was created with
  PdPtr pd;
  CqPtr sendCq, recvCq;
  CmIdPtr cmId;  // set when rdma_cm owns the QP (destroyed with rdma_destroy_qp)
  SrqPtr srq;    // set when it receives through an SRQ
  int Destroy() override {
    if (qp == nullptr) return 0;
    int ret = 0;
    if (cmId) {
      rdma_destroy_qp(cmId->id);
      cmId->hasQp = false;
    } else {
      ret = ibv_destroy_qp(qp);
    }
    if (ret == 0) qp = nullptr;
    return ret;
  }
  bool Live() const override { return qp != nullptr; }
  /// Listed by its PD, CQs and cm_id, which release it first when they close with cascade.
  void Register(const std::shared_ptr<QpHandle> &self) {
    device = pd->device;
    pd->children.Add(self);
    sendCq->children.Add(self);
    if (recvCq != sendCq) recvCq->children.Add(self);
    if (cmId) cmId->children.Add(self);
    if (srq) srq->children.Add(self);
  }
  ~QpHandle() override { Destroy(); }
};

// Every IBV_QP_EX_WITH_* flag the RC ibv_wr_* path may use; the provider refuses the
// ones it lacks (EOPNOTSUPP / EINVAL), which the caller sees as a typed error.
constexpr uint64_t kRcSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

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

}  // namespace

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

void RecvChain::Parse(Napi::Env env, const Napi::Value &v) {
  if (!v.IsArray()) ThrowArgument(env, "wrs", "expected an array of receive requests");
  Napi::Array arr = v.As<Napi::Array>();
  uint32_t n = arr.Length();
  wrs.assign(n, ibv_recv_wr{});
  sges.assign(n, {});
  for (uint32_t i = 0; i < n; i++) {
    Napi::Value e = arr.Get(i);
    if (!e.IsObject()) ThrowArgument(env, "wrs[" + std::to_string(i) + "]", "a receive request must be an object");
    Napi::Object o = e.As<Napi::Object>();
    wrs[i].wr_id = ReadU64(o.Get("wrId"), "wrId");
    ReadSges(o.Get("sgList"), sges[i]);
  }
  for (uint32_t i = 0; i < n; i++) {
    wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
    wrs[i].num_sge = static_cast<int>(sges[i].size());
    wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
  }
}

// { mr, addr, length, access } -> ibv_mw_bind_info; `keep` holds the MR until posted.
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
    std::memcpy(&wrs[i].wr_id, w + at + recv_word::kWrId, sizeof wrs[i].wr_id);
    std::vector<ibv_sge> &list = sges[i];
    list.resize(numSge);
    for (uint32_t k = 0; k < numSge; k++) {
      size_t s = at + recv_word::kCount + k * sge_word::kCount;
      std::memcpy(&list[k].addr, w + s + sge_word::kAddr, sizeof list[k].addr);
      list[k].length = w[s + sge_word::kLength];
      list[k].lkey = w[s + sge_word::kLkey];
    }
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
  long index = bad != nullptr ? bad - wrs.data() : 0;
  ThrowVerbs(env, call, device, ret > 0 ? ret : -ret,
             "receive request #" + std::to_string(index) + " refused", static_cast<int>(index));
}

namespace {

class Qp : public Resource<Qp, QpHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeQp", "qp", "queue pair", "ibv_destroy_qp", ""};

  static Properties Methods() {
    return {
        InstanceMethod<&Qp::Modify>("modify"),
        InstanceMethod<&Qp::Query>("query"),
        InstanceMethod<&Qp::PostSend>("postSend"),
        InstanceMethod<&Qp::PostSendEx>("postSendEx"),
        InstanceMethod<&Qp::PostPacked>("postPacked"),
        InstanceMethod<&Qp::BoundPost>("boundPost"),
        InstanceMethod<&Qp::PostRecv>("postRecv"),
        InstanceMethod<&Qp::PostRecvPacked>("postRecvPacked"),
        InstanceMethod<&Qp::BindMw>("bindMw"),
        InstanceMethod<&Qp::Prepare>("prepare"),
        InstanceMethod<&Qp::PostPrepared>("postPrepared"),
        InstanceMethod<&Qp::Unprepare>("unprepare"),
        InstanceAccessor<&Qp::QpNum>("qpNum"),
        InstanceAccessor<&Qp::Extended>("extended"),
        InstanceAccessor<&Qp::CmOwned>("cmOwned"),
        InstanceAccessor<&Qp::Cap>("cap"),
    };
  }

  // new NativeQp(pd, sendCq, recvCq, init) or new NativeQp(External<QpHandle>)
  explicit Qp(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    if (Adopted(info)) {
      qpNum_ = handle_->qp->qp_num;
      // What rdma_create_qp granted (the send queue's depth bounds unsignaled runs).
      ibv_qp_attr qa{};
      ibv_qp_init_attr qi{};
      if (ibv_query_qp(handle_->qp, &qa, IBV_QP_CAP, &qi) == 0) cap_ = qi.cap;
      return;
    }
    PdPtr pd = PdFromJs(info[0], "ibv_create_qp");
    CqPtr send = CqFromJs(info[1], "ibv_create_qp");
    CqPtr recv = CqFromJs(info[2], "ibv_create_qp");
    if (!info[3].IsObject()) ThrowArgument(env, "init", "init attributes must be an object");
    Napi::Object init = info[3].As<Napi::Object>();
    device_ = pd->device;
    ibv_qp_init_attr_ex a{};
    a.send_cq = send->cq;
    a.recv_cq = recv->cq;
    a.qp_type = static_cast<ibv_qp_type>(ReadU32Prop(init, "qpType", IBV_QPT_RC, 255));
    a.sq_sig_all = ReadBoolProp(init, "sqSigAll", false) ? 1 : 0;
    a.cap.max_send_wr = ReadU32Prop(init, "maxSendWr", 16);
    a.cap.max_recv_wr = ReadU32Prop(init, "maxRecvWr", 16);
    a.cap.max_send_sge = ReadU32Prop(init, "maxSendSge", 1);
    a.cap.max_recv_sge = ReadU32Prop(init, "maxRecvSge", 1);
    a.cap.max_inline_data = ReadU32Prop(init, "maxInlineData", 0);
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd->pd;
    bool extended = ReadBoolProp(init, "extended", false);
    auto h = std::make_shared<QpHandle>();
    h->pd = pd;
    h->sendCq = send;
    h->recvCq = recv;
    if (Napi::Value srq = init.Get("srq"); !srq.IsUndefined()) {
      h->srq = SrqFromJs(srq, "ibv_create_qp");
      a.srq = h->srq->srq;
      a.cap.max_recv_wr = 0;  // the SRQ holds the receives
      a.cap.max_recv_sge = 0;
    }
    if (extended) {
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = ReadU64Prop(init, "sendOpsFlags", kRcSendOps);
      h->qp = ibv_create_qp_ex(pd->ctx->ctx, &a);
      if (h->qp == nullptr)
        ThrowVerbs(env, "ibv_create_qp_ex", device_, errno != 0 ? errno : EOPNOTSUPP);
      h->qpx = ibv_qp_to_qp_ex(h->qp);
      if (h->qpx == nullptr) ThrowVerbs(env, "ibv_qp_to_qp_ex", device_, EOPNOTSUPP);
      h->sendOps = a.send_ops_flags;
    } else {
      ibv_qp_init_attr legacy{};
      legacy.send_cq = a.send_cq;
      legacy.recv_cq = a.recv_cq;
      legacy.qp_type = a.qp_type;
      legacy.sq_sig_all = a.sq_sig_all;
      legacy.cap = a.cap;
      legacy.srq = a.srq;
      h->qp = ibv_create_qp(pd->pd, &legacy);
      if (h->qp == nullptr) ThrowVerbs(env, "ibv_create_qp", device_, errno != 0 ? errno : ENOMEM);
      a.cap = legacy.cap;  // the provider writes back the capacities it granted
    }
    cap_ = a.cap;
    qpNum_ = h->qp->qp_num;
    h->Register(h);
    Attach(h);
  }

 private:
  Napi::Value QpNum(const Napi::CallbackInfo &info) { return Napi::Number::New(info.Env(), qpNum_); }
  Napi::Value Extended(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), handle_ && handle_->qpx != nullptr);
  }
  Napi::Value CmOwned(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), handle_ && handle_->cmId != nullptr);
  }
  Napi::Value Cap(const Napi::CallbackInfo &info) {
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("maxSendWr", cap_.max_send_wr);
    o.Set("maxRecvWr", cap_.max_recv_wr);
    o.Set("maxSendSge", cap_.max_send_sge);
    o.Set("maxRecvSge", cap_.max_recv_sge);
    o.Set("maxInlineData", cap_.max_inline_data);
    return o;
  }

  // modify(attr, mask): the mask is computed by the TS layer from the same table
  // (src/verbs/qp-attr.ts) that names the fields; here every present field is read.
  Napi::Value Modify(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_modify_qp");
    if (!info[0].IsObject()) ThrowArgument(env, "attr", "must be an object");
    Napi::Object o = info[0].As<Napi::Object>();
    uint32_t mask = ReadU32(info[1], "mask");
    ibv_qp_attr a{};
    a.qp_state = static_cast<ibv_qp_state>(ReadU32Prop(o, "qpState", 0, 255));
    a.cur_qp_state = static_cast<ibv_qp_state>(ReadU32Prop(o, "curQpState", 0, 255));
    a.path_mtu = static_cast<ibv_mtu>(ReadU32Prop(o, "pathMtu", IBV_MTU_1024, 5));
    a.qkey = ReadU32Prop(o, "qkey", 0);
    a.rq_psn = ReadU32Prop(o, "rqPsn", 0, 0xffffff);
    a.sq_psn = ReadU32Prop(o, "sqPsn", 0, 0xffffff);
    a.dest_qp_num = ReadU32Prop(o, "destQpNum", 0, 0xffffff);
    a.qp_access_flags = ReadU32Prop(o, "qpAccessFlags", 0);
    a.pkey_index = static_cast<uint16_t>(ReadU32Prop(o, "pkeyIndex", 0, 0xffff));
    a.port_num = static_cast<uint8_t>(ReadU32Prop(o, "portNum", 1, 255));
    a.max_rd_atomic = static_cast<uint8_t>(ReadU32Prop(o, "maxRdAtomic", 0, 255));
    a.max_dest_rd_atomic = static_cast<uint8_t>(ReadU32Prop(o, "maxDestRdAtomic", 0, 255));
    a.min_rnr_timer = static_cast<uint8_t>(ReadU32Prop(o, "minRnrTimer", 0, 31));
    a.timeout = static_cast<uint8_t>(ReadU32Prop(o, "timeout", 0, 31));
    a.retry_cnt = static_cast<uint8_t>(ReadU32Prop(o, "retryCnt", 0, 7));
    a.rnr_retry = static_cast<uint8_t>(ReadU32Prop(o, "rnrRetry", 0, 7));
    Napi::Value ahv = o.Get("ahAttr");
    if (ahv.IsObject()) ReadAhAttr(ahv.As<Napi::Object>(), a.ah_attr);
    CheckIbv(env, "ibv_modify_qp", device_, ibv_modify_qp(h->qp, &a, static_cast<int>(mask)));
    return env.Undefined();
  }

  Napi::Value Query(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_query_qp");
    ibv_qp_attr a{};
    ibv_qp_init_attr init{};
    // Every ibv_qp_attr_mask bit ibv_query_qp answers (providers fill all of them).
    int mask = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS |
               IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU |
               IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN |
               IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PATH_MIG_STATE | IBV_QP_CAP | IBV_QP_DEST_QPN;
    CheckIbv(env, "ibv_query_qp", device_, ibv_query_qp(h->qp, &a, mask, &init));
    Napi::Object o = Napi::Object::New(env);
    o.Set("qpState", static_cast<double>(a.qp_state));
    o.Set("curQpState", static_cast<double>(a.cur_qp_state));
    o.Set("pathMtu", static_cast<double>(a.path_mtu));
    o.Set("pathMigState", static_cast<double>(a.path_mig_state));
    o.Set("qkey", a.qkey);
    o.Set("rqPsn", a.rq_psn);
    o.Set("sqPsn", a.sq_psn);
    o.Set("destQpNum", a.dest_qp_num);
    o.Set("qpAccessFlags", static_cast<double>(static_cast<uint32_t>(a.qp_access_flags)));
    o.Set("cap", CapObject(env, a.cap));
    o.Set("ahAttr", AhAttrObject(env, a.ah_attr));
    o.Set("altAhAttr", AhAttrObject(env, a.alt_ah_attr));
    o.Set("pkeyIndex", a.pkey_index);
    o.Set("altPkeyIndex", a.alt_pkey_index);
    o.Set("enSqdAsyncNotify", a.en_sqd_async_notify);
    o.Set("sqDraining", a.sq_draining);
    o.Set("maxRdAtomic", a.max_rd_atomic);
    o.Set("maxDestRdAtomic", a.max_dest_rd_atomic);
    o.Set("minRnrTimer", a.min_rnr_timer);
    o.Set("portNum", a.port_num);
    o.Set("timeout", a.timeout);
    o.Set("retryCnt", a.retry_cnt);
    o.Set("rnrRetry", a.rnr_retry);
    o.Set("altPortNum", a.alt_port_num);
    o.Set("altTimeout", a.alt_timeout);
    o.Set("rateLimit", a.rate_limit);
    o.Set("qpType", static_cast<double>(init.qp_type));
    o.Set("sqSigAll", Napi::Boolean::New(env, init.sq_sig_all != 0));
    o.Set("hasSrq", Napi::Boolean::New(env, init.srq != nullptr));
    return o;
  }

  static Napi::Object CapObject(Napi::Env env, const ibv_qp_cap &c) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("maxSendWr", c.max_send_wr);
    o.Set("maxRecvWr", c.max_recv_wr);
    o.Set("maxSendSge", c.max_send_sge);
    o.Set("maxRecvSge", c.max_recv_sge);
    o.Set("maxInlineData", c.max_inline_data);
    return o;
  }

  static Napi::Object AhAttrObject(Napi::Env env, const ibv_ah_attr &a) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("dlid", a.dlid);
    o.Set("sl", a.sl);
    o.Set("srcPathBits", a.src_path_bits);
    o.Set("staticRate", a.static_rate);
    o.Set("portNum", a.port_num);
    o.Set("isGlobal", Napi::Boolean::New(env, a.is_global != 0));
    Napi::Object grh = Napi::Object::New(env);
    grh.Set("dgid", Napi::Buffer<uint8_t>::Copy(env, a.grh.dgid.raw, 16));
    grh.Set("flowLabel", a.grh.flow_label);
    grh.Set("sgidIndex", a.grh.sgid_index);
    grh.Set("hopLimit", a.grh.hop_limit);
    grh.Set("trafficClass", a.grh.traffic_class);
    o.Set("grh", grh);
    return o;
  }

  // bindMw(mw, wrId, sendFlags, { mr, addr, length, access }) -> new rkey: ibv_bind_mw of a
  // type 1 window (libibverbs refuses a type 2 one with EINVAL; the TS layer before it).
  Napi::Value BindMw(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_bind_mw");
    MwPtr mw = MwFromJs(info[0], "ibv_bind_mw");
    ibv_mw_bind bind{};
    bind.wr_id = ReadU64(info[1], "wrId");
    bind.send_flags = ReadU32(info[2], "sendFlags");
    std::vector<std::shared_ptr<ResourceHandle>> keep;
    ReadBindInfo(env, info[3], bind.bind_info, keep);
    CheckIbv(env, "ibv_bind_mw", device_, ibv_bind_mw(h->qp, mw->mw, &bind));
    return Napi::Number::New(env, mw->mw->rkey);
  }

  // A parsed chain of legacy send requests (the SGE vectors own the memory sg_list
  // points into, so the struct must not be copied after Link()).
  struct SendChain {
    std::vector<ibv_send_wr> wrs;
    std::vector<std::vector<ibv_sge>> sges;
    std::vector<AhPtr> ahs;  // UD destinations, alive as long as the chain
    std::vector<std::shared_ptr<ResourceHandle>> keep;  // BIND_MW's window and MR
    void Link() {
      for (size_t i = 0; i < wrs.size(); i++) {
        wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
        wrs[i].num_sge = static_cast<int>(sges[i].size());
        wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
      }
    }
  };

  static void ParseSendChain(Napi::Env env, const Napi::Value &v, SendChain &chain) {
    if (!v.IsArray()) ThrowArgument(env, "wrs", "expected an array of work requests");
    Napi::Array arr = v.As<Napi::Array>();
    uint32_t n = arr.Length();
    chain.wrs.assign(n, ibv_send_wr{});
    chain.sges.assign(n, {});
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value e = arr.Get(i);
      if (!e.IsObject()) ThrowArgument(env, "wrs[" + std::to_string(i) + "]", "a work request must be an object");
      Napi::Object o = e.As<Napi::Object>();
      ibv_send_wr &wr = chain.wrs[i];
      wr.wr_id = ReadU64(o.Get("wrId"), "wrId");
      wr.opcode = static_cast<ibv_wr_opcode>(ReadU32(o.Get("opcode"), "opcode", 255));
      wr.send_flags = ReadU32Prop(o, "sendFlags", 0);
      ReadSges(o.Get("sgList"), chain.sges[i]);
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
          chain.keep.push_back(mw);
          wr.bind_mw.mw = mw->mw;
          wr.bind_mw.rkey = ReadU32(o.Get("bindRkey"), "bindRkey");
          ReadBindInfo(env, o.Get("bindInfo"), wr.bind_mw.bind_info, chain.keep);
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
        chain.ahs.push_back(handle);
        wr.wr.ud.ah = handle->ah;
        wr.wr.ud.remote_qpn = ReadU32Prop(o, "remoteQpn", 0, 0xffffff);
        wr.wr.ud.remote_qkey = ReadU32Prop(o, "remoteQkey", 0);
      }
    }
    chain.Link();
  }

  // Inline requests make the provider copy from the SGE addresses in this process: each
  // must lie in a live MR of the QP's PD, else a wrong address would crash the process.
  // Returns the index of the first bad request, or -1.
  static long FirstBadInline(const std::shared_ptr<QpHandle> &h, size_t n,
                             const std::function<uint32_t(size_t)> &flags,
                             const std::function<const std::vector<ibv_sge> &(size_t)> &sges,
                             size_t *badSge) {
    for (size_t i = 0; i < n; i++)
      if ((flags(i) & IBV_SEND_INLINE) != 0 && !InlineSgesRegistered(*h->pd, sges(i), badSge))
        return static_cast<long>(i);
    return -1;
  }

  [[noreturn]] void ThrowBadInline(Napi::Env env, const char *call, long index, size_t sge) {
    ThrowVerbs(env, call, device_, EINVAL,
               "work request #" + std::to_string(index) + ": inline sgList[" + std::to_string(sge) +
                   "] is not inside a registered MR of this QP's PD",
               static_cast<int>(index));
  }

  void PostChain(Napi::Env env, const std::shared_ptr<QpHandle> &h, SendChain &chain) {
    if (chain.wrs.empty()) return;
    // A prepared chain outlives nothing it points at: an AH released by its PD's
    // cascading close would be a dangling pointer in the provider.
    for (const AhPtr &ah : chain.ahs)
      if (ah->ah == nullptr) ThrowClosed(env, "ibv_post_send", device_, "an address handle of the list");
    size_t badSge = 0;
    long badInline = FirstBadInline(
        h, chain.wrs.size(), [&](size_t i) { return chain.wrs[i].send_flags; },
        [&](size_t i) -> const std::vector<ibv_sge> & { return chain.sges[i]; }, &badSge);
    if (badInline >= 0) {
      // As a provider refusing request #k does: the requests before it are posted.
      if (badInline > 0) {
        chain.wrs[badInline - 1].next = nullptr;
        ibv_send_wr *bad = nullptr;
        int ret = ibv_post_send(h->qp, chain.wrs.data(), &bad);
        chain.wrs[badInline - 1].next = &chain.wrs[badInline];
        if (ret != 0) {
          long index = bad != nullptr ? bad - chain.wrs.data() : 0;
          ThrowVerbs(env, "ibv_post_send", device_, ret > 0 ? ret : -ret,
                     "work request #" + std::to_string(index) + " refused", static_cast<int>(index));
        }
      }
      ThrowBadInline(env, "ibv_post_send", badInline, badSge);
    }
    ibv_send_wr *bad = nullptr;
    int ret = ibv_post_send(h->qp, chain.wrs.data(), &bad);
    if (ret != 0) {
      long index = bad != nullptr ? bad - chain.wrs.data() : 0;
      ThrowVerbs(env, "ibv_post_send", device_, ret > 0 ? ret : -ret,
                 "work request #" + std::to_string(index) + " refused", static_cast<int>(index));
    }
  }

  // postSend(wrs): one ibv_post_send for the whole chain (one doorbell). Throws a
  // VerbsError whose message names the index of the refused request; the requests
  // before it were posted (that is what the verbs contract says).
  Napi::Value PostSend(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_send");
    SendChain chain;
    ParseSendChain(env, info[0], chain);
    PostChain(env, h, chain);
    return env.Undefined();
  }

  // prepare(wrs) -> id: parses a chain once; postPrepared(id) posts it again and again
  // with no per-post argument reading (the hot loop of a benchmark or a poller).
  Napi::Value Prepare(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Handle("ibv_post_send");
    auto chain = std::make_unique<SendChain>();
    ParseSendChain(env, info[0], *chain);
    uint32_t id = nextPrepared_++;
    prepared_.emplace(id, std::move(chain));
    return Napi::Number::New(env, id);
  }

  Napi::Value PostPrepared(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_send");
    auto it = prepared_.find(ReadU32(info[0], "id"));
    if (it == prepared_.end()) ThrowVerbs(env, "ibv_post_send", device_, EINVAL, "no such prepared chain");
    PostChain(env, h, *it->second);
    return env.Undefined();
  }

  Napi::Value Unprepare(const Napi::CallbackInfo &info) {
    prepared_.erase(ReadU32(info[0], "id"));
    return info.Env().Undefined();
  }

  // One request of the ibv_wr_* path, parsed before anything is started.
  struct ExRequest {
    uint64_t wrId, remoteAddr, compareAdd, swap;
    uint32_t opcode, flags, rkey, imm;
    std::vector<ibv_sge> sges;
    uint64_t atomicValue;
    uint64_t flushLength;
    uint32_t flushType, flushLevel;
    // LOCAL_INV / SEND_WITH_INV / BIND_MW (object path only; postPacked leaves them unset).
    uint32_t invalidateRkey, bindRkey;
    MwPtr mw;
    ibv_mw_bind_info bindInfo;
    std::vector<std::shared_ptr<ResourceHandle>> keep;  // BIND_MW's MR, alive until posted
  };

  // postSendEx(wrs): the ibv_wr_* path (ibv_wr_start .. ibv_wr_complete), extended QPs only.
  Napi::Value PostSendEx(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_wr_complete");
    if (h->qpx == nullptr)
      ThrowVerbs(env, "ibv_wr_start", device_, EOPNOTSUPP, "the QP was not created as extended");
    if (!info[0].IsArray()) ThrowArgument(env, "wrs", "expected an array of work requests");
    Napi::Array arr = info[0].As<Napi::Array>();
    uint32_t n = arr.Length();
    // Parse everything first so a bad argument never leaves a half-built batch.
    std::vector<ExRequest> ps(n);
    for (uint32_t i = 0; i < n; i++) {
      Napi::Value v = arr.Get(i);
      if (!v.IsObject()) ThrowArgument(env, "wrs[" + std::to_string(i) + "]", "a work request must be an object");
      Napi::Object o = v.As<Napi::Object>();
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
      if (p.flushType > 0xff || p.flushLevel > 0xff)
        ThrowArgument(env, "wrs[" + std::to_string(i) + "]", "flushType and flushLevel must fit in 8 bits");
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
    PostEx(env, h, ps, n);
    return env.Undefined();
  }

  // The first n requests of ps through ibv_wr_start .. ibv_wr_complete: all or nothing.
  void PostEx(Napi::Env env, const std::shared_ptr<QpHandle> &h, std::vector<ExRequest> &ps, uint32_t n) {
    if (n == 0) return;
    ibv_qp_ex *q = h->qpx;
    // An op the QP was not created for has no builder (a NULL function pointer in the
    // provider): refuse the whole list before starting it, never call through NULL.
    for (uint32_t i = 0; i < n; i++) {
      if (!ExOpAvailable(q, h->sendOps, ps[i].opcode))
        ThrowVerbs(env, "ibv_wr_start", device_, EOPNOTSUPP,
                   "work request #" + std::to_string(i) + ": opcode " + std::to_string(ps[i].opcode) +
                       " is not among this QP's send_ops_flags",
                   static_cast<int>(i));
    }
    // All or nothing on this path: a bad inline request refuses the whole list.
    size_t badSge = 0;
    long badInline = FirstBadInline(
        h, n,
        [&](size_t i) {
          return ps[i].opcode == IBV_WR_ATOMIC_WRITE || ps[i].opcode == flush::kWrFlush ? 0u : ps[i].flags;
        },
        [&](size_t i) -> const std::vector<ibv_sge> & { return ps[i].sges; }, &badSge);
    if (badInline >= 0) ThrowBadInline(env, "ibv_wr_set_inline_data_list", badInline, badSge);
    ibv_wr_start(q);
    for (uint32_t i = 0; i < n; i++) {
      ExRequest &p = ps[i];
      q->wr_id = p.wrId;
      q->wr_flags = p.flags & ~static_cast<unsigned>(IBV_SEND_INLINE);
      switch (p.opcode) {
        case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(q, p.rkey, p.remoteAddr); break;
        case IBV_WR_RDMA_WRITE_WITH_IMM: ibv_wr_rdma_write_imm(q, p.rkey, p.remoteAddr, htonl(p.imm)); break;
        case IBV_WR_SEND: ibv_wr_send(q); break;
        case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(q, htonl(p.imm)); break;
        case IBV_WR_RDMA_READ: ibv_wr_rdma_read(q, p.rkey, p.remoteAddr); break;
        case IBV_WR_ATOMIC_CMP_AND_SWP:
          ibv_wr_atomic_cmp_swp(q, p.rkey, p.remoteAddr, p.compareAdd, p.swap);
          break;
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
          ibv_wr_atomic_fetch_add(q, p.rkey, p.remoteAddr, p.compareAdd);
          break;
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
        default:
          break;  // unreachable: ExOpAvailable refused it above
      }
      // Atomic Write carries its payload itself; Flush, LOCAL_INV and BIND_MW have none.
      if (p.opcode == IBV_WR_ATOMIC_WRITE || p.opcode == flush::kWrFlush ||
          p.opcode == IBV_WR_LOCAL_INV || p.opcode == IBV_WR_BIND_MW)
        continue;
      if (p.flags & IBV_SEND_INLINE) {
        std::vector<ibv_data_buf> bufs;
        for (const ibv_sge &s : p.sges)
          bufs.push_back({reinterpret_cast<void *>(static_cast<uintptr_t>(s.addr)), s.length});
        ibv_wr_set_inline_data_list(q, bufs.size(), bufs.data());
      } else {
        ibv_wr_set_sge_list(q, p.sges.size(), p.sges.data());
      }
    }
    CheckIbv(env, "ibv_wr_complete", device_, ibv_wr_complete(q));
  }


  // postPacked(words, count, ex): `count` requests packed by the TS layer (send_word /
  // sge_word, common.h) into `words`, posted with one doorbell through ibv_post_send or,
  // with `ex`, the ibv_wr_* path. The hot path of Qp.postSend: no N-API property read
  // and, once the scratch vectors have grown, no allocation per post.
  Napi::Value PostPacked(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    bool ex = info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      ThrowArgument(env, "words", "postPacked needs a Uint32Array");
    auto words = info[0].As<Napi::Uint32Array>();
    PostPackedWords(env, words.Data(), words.ElementLength(), ReadU32(info[1], "count", 0xffff), ex);
    return env.Undefined();
  }

  // boundPost(words) -> { memory, post(count, ex) }: postPacked as a bound call
  // (bound_call.h) reading requests from `words` u32 of memory the addon owns (`memory`).
  // Qp.postSend packs into it; a packing that needs more asks for a larger one.
  Napi::Value BoundPost(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Handle("ibv_post_send");
    uint32_t words = ReadU32(info[0], "words", 1u << 24);
    if (words == 0) ThrowArgument(env, "words", "must be at least 1");
    auto state = std::make_unique<BoundPostState>();
    state->self = this;
    state->block = NewWordBlock(words);
    // The scratch vectors the post uses are this object's: keep it while the function lives.
    if (napi_create_reference(env, info.This(), 1, &state->selfRef) != napi_ok)
      throw Napi::Error::New(env, "napi_create_reference failed");
    Napi::Object out = Napi::Object::New(env);
    out.Set("memory", WordBlockBuffer(env, state->block));
    out.Set("post", BindCall(env, "post", &BoundPostCall, std::move(state)));
    return out;
  }

  struct BoundPostState {
    Qp *self = nullptr;
    napi_ref selfRef = nullptr;
    WordBlock block;
    void Finalize(napi_env env) {
      if (selfRef != nullptr) napi_delete_reference(env, selfRef);
      selfRef = nullptr;
    }
  };

  // post(count, ex), bound to one QP and its memory.
  static napi_value BoundPostCall(napi_env env, napi_callback_info info) {
    return RunBound<BoundPostState, 2>(env, info, [env](BoundPostState &s, napi_value *argv) {
      uint32_t n = BoundU32(env, argv[0], "count", 0xffff);
      bool ex = false;
      if (napi_get_value_bool(env, argv[1], &ex) != napi_ok) ex = false;
      s.self->PostPackedWords(Napi::Env(env), s.block->data(), s.block->size(), n, ex);
      return static_cast<napi_value>(nullptr);
    });
  }

  // The body of postPacked: `n` requests from `w` (`len` words), the post's time stamp
  // written after them when there is room.
  void PostPackedWords(Napi::Env env, uint32_t *w, size_t len, uint32_t n, bool ex) {
    auto h = Handle(ex ? "ibv_wr_complete" : "ibv_post_send");
    if (ex && h->qpx == nullptr)
      ThrowVerbs(env, "ibv_wr_start", device_, EOPNOTSUPP, "the QP was not created as extended");
    auto u64At = [&](size_t at) {
      uint64_t v;
      std::memcpy(&v, w + at, sizeof v);
      return v;
    };
    // Read and check every request before posting any (nothing half-applied on bad input).
    if (ex) {
      if (exScratch_.size() < n) exScratch_.resize(n);
    } else {
      scratch_.wrs.assign(n, ibv_send_wr{});
      if (scratch_.sges.size() < n) scratch_.sges.resize(n);
      scratch_.ahs.clear();
    }
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
      using namespace send_word;
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
      std::vector<ibv_sge> &sges = ex ? exScratch_[i].sges : scratch_.sges[i];
      sges.resize(numSge);
      for (uint32_t k = 0; k < numSge; k++) {
        size_t s = at + kCount + k * sge_word::kCount;
        sges[k].addr = u64At(s + sge_word::kAddr);
        sges[k].length = w[s + sge_word::kLength];
        sges[k].lkey = w[s + sge_word::kLkey];
      }
      if (ex) {
        ExRequest &p = exScratch_[i];
        p.wrId = u64At(at + kWrId);
        p.opcode = r[kOpcode];
        p.flags = r[kSendFlags];
        p.remoteAddr = u64At(at + kRemoteAddr);
        p.rkey = r[kRkey];
        p.compareAdd = u64At(at + kCompareAdd);
        p.swap = u64At(at + kSwap);
        p.imm = r[kImmData];
        p.atomicValue = u64At(at + kAtomicValue);
        p.flushLength = u64At(at + kFlushLength);
        p.flushType = r[kFlushType];
        p.flushLevel = r[kFlushLevel];
        // The packed set has no window ops: drop what an earlier object-path use left.
        p.invalidateRkey = 0;
        p.bindRkey = 0;
        p.mw.reset();
        p.keep.clear();
        if (p.flushType > 0xff || p.flushLevel > 0xff)
          ThrowArgument(env, "wrs[" + std::to_string(i) + "]", "flushType and flushLevel must fit in 8 bits");
      } else {
        ibv_send_wr &wr = scratch_.wrs[i];
        wr.wr_id = u64At(at + kWrId);
        wr.opcode = static_cast<ibv_wr_opcode>(r[kOpcode]);
        wr.send_flags = r[kSendFlags];
        wr.imm_data = htonl(r[kImmData]);  // the wire carries it big-endian
        if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
          wr.wr.atomic.remote_addr = u64At(at + kRemoteAddr);
          wr.wr.atomic.rkey = r[kRkey];
          wr.wr.atomic.compare_add = u64At(at + kCompareAdd);
          wr.wr.atomic.swap = u64At(at + kSwap);
        } else {
          wr.wr.rdma.remote_addr = u64At(at + kRemoteAddr);
          wr.wr.rdma.rkey = r[kRkey];
        }
      }
      at += kCount + static_cast<size_t>(numSge) * sge_word::kCount;
    }
    // The two words after the last request, when the array has them, take the post's
    // time stamp (f64 microseconds, FastClock: the TSC, as a round trip's postedAt and
    // perftest's post stamps), written just before the doorbell.
    if (len >= at + 2) {
      const FastClock &clock = FastClock::Get();
      double us = clock.Microseconds(clock.Ticks());
      std::memcpy(w + at, &us, sizeof us);
    }
    if (ex) {
      PostEx(env, h, exScratch_, n);
    } else {
      scratch_.Link();
      PostChain(env, h, scratch_);
    }
  }

  Napi::Value PostRecv(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_recv");
    RecvChain chain;
    chain.Parse(env, info[0]);
    if (chain.wrs.empty()) return env.Undefined();
    ibv_recv_wr *bad = nullptr;
    chain.Check(env, "ibv_post_recv", device_, ibv_post_recv(h->qp, chain.wrs.data(), &bad), bad);
    return env.Undefined();
  }

  // postRecvPacked(words, count): Qp.postRecv's hot path, as postPacked is postSend's.
  Napi::Value PostRecvPacked(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_recv");
    recvScratch_.PostPacked(env, info, "ibv_post_recv", device_, [&](ibv_recv_wr *first, ibv_recv_wr **bad) {
      return ibv_post_recv(h->qp, first, bad);
    });
    return env.Undefined();
  }

  std::map<uint32_t, std::unique_ptr<SendChain>> prepared_;
  RecvChain recvScratch_;
  // postPacked's reused requests (legacy chain, ibv_wr_* list): no allocation per post.
  SendChain scratch_;
  std::vector<ExRequest> exScratch_;
  uint32_t nextPrepared_ = 1;
  uint32_t qpNum_ = 0;
  ibv_qp_cap cap_{};
};

}  // namespace

QpRef QpRefFromJs(const Napi::Value &v, const char *call) {
  auto h = Qp::FromJs(v, call);
  return QpRef{h, h->qp, h->pd, h->sendCq, h->recvCq, h->device};
}

Napi::Object NewCmQpObject(Napi::Env env, const CmIdPtr &id, const PdPtr &pd, const CqPtr &send,
                           const CqPtr &recv, uint64_t sendOps, const SrqPtr &srq) {
  auto h = std::make_shared<QpHandle>();
  h->qp = id->id->qp;
  h->srq = srq;
  if (sendOps != 0) {
    h->qpx = ibv_qp_to_qp_ex(h->qp);
    h->sendOps = sendOps;
  }
  h->pd = pd;
  h->sendCq = send;
  h->recvCq = recv;
  h->cmId = id;
  h->Register(h);
  return Qp::Adopt(env, h);
}

}  // namespace rdma_interop
