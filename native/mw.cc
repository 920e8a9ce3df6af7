// Memory window: ibv_alloc_mw / ibv_dealloc_mw (IBTA 1.5 section 10.6.7). Binding is a
// QP's work (qp.cc: ibv_bind_mw for type 1, IBV_WR_BIND_MW for type 2). A provider
// without windows (siw) fails ibv_alloc_mw with EOPNOTSUPP: a VerbsError, which the TS
// layer completes with the cause.
#include "resource.h"

namespace rdma_interop {

namespace {

class Mw : public Resource<Mw, MwHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeMw", "mw", "memory window", "ibv_dealloc_mw", ""};

  static Properties Methods() {
    return {
        InstanceAccessor<&Mw::Type>("type"),
        InstanceAccessor<&Mw::Rkey>("rkey"),
    };
  }

  // new NativeMw(pd, type)
  explicit Mw(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    PdPtr pd = PdFromJs(info[0], "ibv_alloc_mw");
    uint32_t type = ReadU32(info[1], "type", IBV_MW_TYPE_2);
    if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) ThrowArgument(env, "type", "must be 1 or 2");
    auto h = std::make_shared<MwHandle>();
    h->device = pd->device;
    errno = 0;
    h->mw = ibv_alloc_mw(pd->pd, static_cast<ibv_mw_type>(type));
    if (h->mw == nullptr) ThrowVerbs(env, "ibv_alloc_mw", h->device, errno != 0 ? errno : EOPNOTSUPP);
    h->pd = pd;
    pd->children.Add(h);
    Attach(h);
    type_ = type;
  }

 private:
  Napi::Value Type(const Napi::CallbackInfo &info) { return Napi::Number::New(info.Env(), type_); }
  // libibverbs' mw->rkey (ibv_bind_mw updates it for type 1); 0 once closed.
  Napi::Value Rkey(const Napi::CallbackInfo &info) {
    return Napi::Number::New(info.Env(), handle_ && handle_->mw != nullptr ? handle_->mw->rkey : 0);
  }

  uint32_t type_ = 0;
};

}  // namespace

MwPtr MwFromJs(const Napi::Value &v, const char *call) { return Mw::FromJs(v, call); }

}  // namespace rdma_interop
