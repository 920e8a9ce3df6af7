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
    device_ = ctx->name;
  }

  PdPtr Handle(const char *call) {
    if (!handle_) ThrowClosed(Env(), call, device_, "protection domain");
    return handle_;
  }

 private:
  Napi::Value Closed(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), !handle_);
  }

  Napi::Value Close(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!handle_) return env.Undefined();
    if (handle_.use_count() > 1)
      ThrowVerbs(env, "ibv_dealloc_pd", device_, EBUSY, "the PD still has live MRs or QPs");
    CheckIbv(env, "ibv_dealloc_pd", device_, ibv_dealloc_pd(handle_->pd));
    handle_->pd = nullptr;
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
    throw Napi::TypeError::New(v.Env(), std::string(call) + ": expected a NativePd");
  return Pd::Unwrap(v.As<Napi::Object>())->Handle(call);
}

void RegisterPd(Napi::Env env, Napi::Object exports) {
  AddonData *data = env.GetInstanceData<AddonData>();
  Napi::Function ctor = Pd::Init(env);
  data->pdCtor = Napi::Persistent(ctor);
  exports.Set("NativePd", ctor);
}

}  // namespace rdma_interop
