// Shared receive queue: ibv_create_srq / ibv_destroy_srq, ibv_post_srq_recv,
// ibv_modify_srq and ibv_query_srq. QPs created on it are its children (they close
// first: ibv_destroy_srq refuses while a QP uses the SRQ).
#include "resource.h"
#include "work_request.h"

namespace rdma_interop {

namespace {

Napi::Object SrqAttrObject(Napi::Env env, const ibv_srq_attr &a) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("maxWr", a.max_wr);
  o.Set("maxSge", a.max_sge);
  o.Set("srqLimit", a.srq_limit);
  return o;
}

class Srq : public Resource<Srq, SrqHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeSrq", "srq", "shared receive queue",
                                          "ibv_destroy_srq", "QPs still receive through the SRQ"};

  static Properties Methods() {
    return {
        InstanceMethod<&Srq::PostRecv>("postRecv"),
        InstanceMethod<&Srq::PostRecvCopies>("postRecvCopies"),
        InstanceMethod<&Srq::Modify>("modify"),
        InstanceMethod<&Srq::Query>("query"),
        InstanceAccessor<&Srq::Key>("key"),
        InstanceAccessor<&Srq::Attr>("attr"),
    };
  }

  // new NativeSrq(pd, { maxWr, maxSge, srqLimit })
  explicit Srq(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    PdPtr pd = PdFromJs(info[0], "ibv_create_srq");
    if (!info[1].IsObject()) ThrowArgument(env, "attr", "ibv_create_srq: attributes must be an object");
    Napi::Object o = info[1].As<Napi::Object>();
    ibv_srq_init_attr init{};
    init.attr.max_wr = ReadU32Prop(o, "maxWr", 1);
    init.attr.max_sge = ReadU32Prop(o, "maxSge", 1);
    init.attr.srq_limit = ReadU32Prop(o, "srqLimit", 0);
    auto h = std::make_shared<SrqHandle>();
    h->device = pd->device;
    h->srq = ibv_create_srq(pd->pd, &init);
    if (h->srq == nullptr) ThrowVerbs(env, "ibv_create_srq", h->device, errno != 0 ? errno : ENOMEM);
    h->pd = pd;
    pd->children.Add(h);
    Attach(h);
    granted_ = init.attr;  // the provider writes back what it granted
    key_ = reinterpret_cast<uintptr_t>(h->srq);
  }

 private:
  Napi::Value Key(const Napi::CallbackInfo &info) { return U64(info.Env(), key_); }
  Napi::Value Attr(const Napi::CallbackInfo &info) { return SrqAttrObject(info.Env(), granted_); }

  // postRecv(words, count): `count` receives packed as recv_word (common.h): no N-API
  // property read per request and, once the chain has grown, no allocation.
  Napi::Value PostRecv(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_srq_recv");
    scratch_.PostPacked(env, info, "ibv_post_srq_recv", device_, [&](ibv_recv_wr *first, ibv_recv_wr **bad) {
      return ibv_post_srq_recv(h->srq, first, bad);
    });
    return env.Undefined();
  }

  // postRecvCopies(words, count): a prepared receive (Srq.prepareRecv) posted `count`
  // times in one ibv_post_srq_recv, wrIds counting up from the packed one: a refill of
  // the queue with no JS work per receive.
  Napi::Value PostRecvCopies(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_post_srq_recv");
    scratch_.PostCopies(env, info, "ibv_post_srq_recv", device_, [&](ibv_recv_wr *first, ibv_recv_wr **bad) {
      return ibv_post_srq_recv(h->srq, first, bad);
    });
    return env.Undefined();
  }

  // modify({ maxWr?, srqLimit? }, mask): ibv_modify_srq (the TS layer computes the mask).
  Napi::Value Modify(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_modify_srq");
    if (!info[0].IsObject()) ThrowArgument(env, "attr", "must be an object");
    Napi::Object o = info[0].As<Napi::Object>();
    ibv_srq_attr a{};
    a.max_wr = ReadU32Prop(o, "maxWr", 0);
    a.srq_limit = ReadU32Prop(o, "srqLimit", 0);
    int mask = static_cast<int>(ReadU32(info[1], "mask", IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT));
    CheckIbv(env, "ibv_modify_srq", device_, ibv_modify_srq(h->srq, &a, mask));
    if (mask & IBV_SRQ_MAX_WR) granted_.max_wr = a.max_wr;
    return env.Undefined();
  }

  Napi::Value Query(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto h = Handle("ibv_query_srq");
    ibv_srq_attr a{};
    CheckIbv(env, "ibv_query_srq", device_, ibv_query_srq(h->srq, &a));
    return SrqAttrObject(env, a);
  }

  RecvChain scratch_;
  ibv_srq_attr granted_{};
  uint64_t key_ = 0;
};

}  // namespace

SrqPtr SrqFromJs(const Napi::Value &v, const char *call) { return Srq::FromJs(v, call); }

}  // namespace rdma_interop
