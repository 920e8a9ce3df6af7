// Queue pair: creation (legacy ibv_create_qp, or ibv_create_qp_ex with send_ops_flags
// for the ibv_wr_* path), state transitions (ibv_modify_qp from a typed attribute
// object), query, and posting (ibv_post_send / ibv_wr_* / ibv_post_recv), each post
// list with a single doorbell. QPs made by rdma_create_qp are adopted (NewCmQpObject).
// The requests themselves are read in work_request.cc and posted by qp_post.cc.
#include <map>
#include <memory>
#include <vector>

#include "bound_call.h"
#include "clock.h"
#include "qp_post.h"
#include "resource.h"

namespace rdma_interop {

namespace {

// Every IBV_QP_EX_WITH_* flag the RC ibv_wr_* path may use; the provider refuses the
// ones it lacks (EOPNOTSUPP / EINVAL), which the caller sees as a typed error.
constexpr uint64_t kRcSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

// { mr, addr, length, access } -> ibv_mw_bind_info (ibv_bind_mw of a type 1 window, a verb
// of its own rather than a work request); `keep` holds the MR until posted.
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

class Qp : public Resource<Qp, QpHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeQp", "qp", "queue pair", "ibv_destroy_qp", ""};

  static Properties Methods() {
    return {
        InstanceMethod<&Qp::Modify>("modify"),
        InstanceMethod<&Qp::Query>("query"),
        InstanceMethod<&Qp::PostSend>("postSend"),
        InstanceMethod<&Qp::BoundPost>("boundPost"),
        InstanceMethod<&Qp::PostRecv>("postRecv"),
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
  Napi::Value Cap(const Napi::CallbackInfo &info) { return CapObject(info.Env(), cap_); }

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

  // prepare(words, count, handles) -> id: parses a packed list once (send_word, common.h)
  // and builds its ibv_post_send chain; postPrepared(id) posts it again and again with no
  // per-post argument reading (the hot loop of a benchmark or a poller).
  Napi::Value Prepare(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Handle("ibv_post_send");
    auto words = WordsArgument(env, info[0], "prepare");
    auto list = std::make_unique<SendList>();
    list->Parse(env, words.Data(), words.ElementLength(), ReadU32(info[1], "count", 0xffff), info[2]);
    list->BuildChain();
    uint32_t id = nextPrepared_++;
    prepared_.emplace(id, std::move(list));
    return Napi::Number::New(env, id);
  }

  Napi::Value PostPrepared(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_send");
    auto it = prepared_.find(ReadU32(info[0], "id"));
    if (it == prepared_.end()) ThrowVerbs(env, "ibv_post_send", device_, EINVAL, "no such prepared chain");
    PostSendChain(env, *h, device_, *it->second);
    return env.Undefined();
  }

  Napi::Value Unprepare(const Napi::CallbackInfo &info) {
    prepared_.erase(ReadU32(info[0], "id"));
    return info.Env().Undefined();
  }

  // postSend(words, count, handles, ex): `count` requests packed by the TS layer (send_word
  // / sge_word, common.h) into `words`, the objects they name in `handles`, posted with one
  // doorbell through ibv_post_send or, with `ex`, the ibv_wr_* path. No N-API property read
  // and, once the scratch list has grown, no allocation per post.
  Napi::Value PostSend(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    bool ex = info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
    auto words = WordsArgument(env, info[0], "postSend");
    PostPackedWords(env, words.Data(), words.ElementLength(), ReadU32(info[1], "count", 0xffff), info[2], ex);
    return env.Undefined();
  }

  // boundPost(words) -> { memory, post(count, ex, handles) }: postSend as a bound call
  // (bound_call.h) reading requests from `words` u32 of memory the addon owns (`memory`).
  // Qp.postSend packs into it; a packing that needs more asks for a larger one.
  Napi::Value BoundPost(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Handle("ibv_post_send");
    uint32_t words = ReadU32(info[0], "words", 1u << 24);
    if (words == 0) ThrowArgument(env, "words", "must be at least 1");
    auto state = std::make_unique<BoundPostState>();
    state->self = this;
    // The scratch vectors the post uses are this object's: keep it while the function lives.
    if (napi_create_reference(env, info.This(), 1, &state->selfRef) != napi_ok)
      throw Napi::Error::New(env, "napi_create_reference failed");
    Napi::Object out = Napi::Object::New(env);
    out.Set("memory", state->block.Create(env, words));
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
      block.memory.Release();
    }
  };

  // post(count, ex, handles), bound to one QP and its memory.
  static napi_value BoundPostCall(napi_env env, napi_callback_info info) {
    return RunBound<BoundPostState, 3>(env, info, [env](BoundPostState &s, napi_value *argv) {
      uint32_t n = BoundU32(env, argv[0], "count", 0xffff);
      bool ex = false;
      if (napi_get_value_bool(env, argv[1], &ex) != napi_ok) ex = false;
      Napi::Value handles = argv[2] != nullptr ? Napi::Value(env, argv[2]) : Napi::Env(env).Undefined();
      s.self->PostPackedWords(Napi::Env(env), s.block.Data(env, "ibv_post_send"), s.block.words, n, handles, ex);
      return static_cast<napi_value>(nullptr);
    });
  }

  // The body of postSend: `n` requests from `w` (`len` words), the post's time stamp
  // written after them when there is room.
  void PostPackedWords(Napi::Env env, uint32_t *w, size_t len, uint32_t n, const Napi::Value &handles, bool ex) {
    auto h = Handle(ex ? "ibv_wr_complete" : "ibv_post_send");
    if (ex && h->qpx == nullptr)
      ThrowVerbs(env, "ibv_wr_start", device_, EOPNOTSUPP, "the QP was not created as extended");
    // Read and check every request before posting any (nothing half-applied on bad input).
    size_t at = scratch_.Parse(env, w, len, n, handles);
    // The two words after the last request, when the array has them, take the post's
    // time stamp (f64 microseconds, FastClock: the TSC, as a round trip's postedAt and
    // perftest's post stamps), written just before the doorbell.
    if (len >= at + 2) {
      const FastClock &clock = FastClock::Get();
      double us = clock.Microseconds(clock.Ticks());
      std::memcpy(w + at, &us, sizeof us);
    }
    // The scratch list keeps no window, MR or AH alive past the post, however it ends.
    struct ForgetOnExit {
      SendList &list;
      ~ForgetOnExit() { list.Forget(); }
    } forget{scratch_};
    if (ex) {
      PostExRequests(env, *h, device_, scratch_);
    } else {
      scratch_.BuildChain();
      PostSendChain(env, *h, device_, scratch_);
    }
  }

  // postRecv(words, count): `count` receive requests packed as recv_word (common.h).
  Napi::Value PostRecv(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_recv");
    recvScratch_.PostPacked(env, info, "ibv_post_recv", device_, [&](ibv_recv_wr *first, ibv_recv_wr **bad) {
      return ibv_post_recv(h->qp, first, bad);
    });
    return env.Undefined();
  }

  std::map<uint32_t, std::unique_ptr<SendList>> prepared_;
  RecvChain recvScratch_;
  // postSend's reused requests (either back end): no allocation per post.
  SendList scratch_;
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
