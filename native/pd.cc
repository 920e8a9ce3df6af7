// Protection domain: ibv_alloc_pd / ibv_dealloc_pd.
#include "common.h"

namespace rdma_interop {

namespace {

class Pd : public Napi::ObjectWrap<Pd> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativePd",
                       {
                           InstanceMethod<&Pd::Close>("close"),
                           InstanceAccessor<&Pd::Closed>("closed"),
                       });
  }

  // new NativePd(context) or new NativePd(External<PdPtr>).
  explicit Pd(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Pd>(info) {
    Napi::Env env = info.Env();
    if (info[0].IsExternal()) {
      handle_ = *info[0].As<Napi::External<PdPtr>>().Data();
      device_ = handle_->ctx->name;
      return;
    }
    ContextPtr ctx = ContextFromJs(info[0], "ibv_alloc_pd");
    ibv_pd *pd = ibv_alloc_pd(ctx->ctx);
    if (pd == nullptr) ThrowVerbs(env, "ibv_alloc_pd", ctx->name, errno != 0 ? errno : ENOMEM);
    handle_ = std::make_shared<PdHandle>();
    handle_->pd = pd;
    handle_->ctx = ctx;
    AddChild(ctx->pds, handle_);
    device_ = ctx->name;
  }

  PdPtr Handle(const char *call) {
    if (!handle_ || handle_->pd == nullptr) ThrowClosed(Env(), call, device_, "protection domain");
    return handle_;
  }

 private:
  Napi::Value Closed(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), !handle_ || handle_->pd == nullptr);
  }

  // close(cascade): with cascade, live QPs, AHs and MRs of this PD are released first;
  // without, they make it refuse with EBUSY (ibv_dealloc_pd's own answer).
  Napi::Value Close(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!handle_ || handle_->pd == nullptr) {
      handle_.reset();
      return env.Undefined();
    }
    bool cascade = info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value();
    if (!cascade && handle_->HasLiveChildren())
      ThrowVerbs(env, "ibv_dealloc_pd", device_, EBUSY, "the PD still has live MRs, QPs or AHs");
    CheckIbv(env, "ibv_dealloc_pd", device_, handle_->Release());
    handle_.reset();
    return env.Undefined();
  }

  PdPtr handle_;
  std::string device_;
};

}  // namespace

PdPtr PdFromJs(const Napi::Value &v, const char *call) {
  AddonData *data = v.Env().GetInstanceData<AddonData>();
  if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(data->pdCtor.Value()))
    ThrowArgument(v.Env(), "pd", std::string(call) + ": expected a NativePd");
  return Pd::Unwrap(v.As<Napi::Object>())->Handle(call);
}

void RegisterPd(Napi::Env env, Napi::Object exports) {
  AddonData *data = env.GetInstanceData<AddonData>();
  Napi::Function ctor = Pd::Init(env);
  data->pdCtor = Napi::Persistent(ctor);
  exports.Set("NativePd", ctor);
}

}  // namespace rdma_interop
