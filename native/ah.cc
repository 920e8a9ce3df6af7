// Address handle (ibv_create_ah / ibv_destroy_ah): where a UD send goes.
#include "common.h"

namespace rdma_interop {

namespace {

class Ah : public Napi::ObjectWrap<Ah> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeAh",
                       {
                           InstanceMethod<&Ah::Close>("close"),
                           InstanceAccessor<&Ah::Closed>("closed"),
                       });
  }

  // new NativeAh(pd, { portNum, sl, grh: { dgid, sgidIndex, hopLimit, ... }, dlid })
  explicit Ah(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Ah>(info) {
    Napi::Env env = info.Env();
    PdPtr pd = PdFromJs(info[0], "ibv_create_ah");
    if (!info[1].IsObject()) ThrowArgument(env, "attr", "ibv_create_ah: attributes must be an object");
    ibv_ah_attr a{};
    ReadAhAttr(info[1].As<Napi::Object>(), a);
    device_ = pd->ctx->name;
    auto h = std::make_shared<AhHandle>();
    h->ah = ibv_create_ah(pd->pd, &a);
    if (h->ah == nullptr) ThrowVerbs(env, "ibv_create_ah", device_, errno != 0 ? errno : EINVAL);
    h->pd = pd;
    handle_ = h;
    AddChild(pd->ahs, h);
  }

  AhPtr Handle(const char *call) {
    if (!handle_ || handle_->ah == nullptr) ThrowClosed(Env(), call, device_, "address handle");
    return handle_;
  }

 private:
  Napi::Value Closed(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), !handle_ || handle_->ah == nullptr);
  }

  Napi::Value Close(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!handle_ || handle_->ah == nullptr) {
      handle_.reset();
      return env.Undefined();
    }
    // A prepared chain may still point at it.
    if (handle_.use_count() > 1)
      ThrowVerbs(env, "ibv_destroy_ah", device_, EBUSY, "a prepared send list still uses this AH");
    CheckIbv(env, "ibv_destroy_ah", device_, handle_->Release());
    handle_.reset();
    return env.Undefined();
  }

  AhPtr handle_;
  std::string device_;

  friend AhPtr rdma_interop::AhFromJs(const Napi::Value &v, const char *call);
};

}  // namespace

AhPtr AhFromJs(const Napi::Value &v, const char *call) {
  AddonData *data = v.Env().GetInstanceData<AddonData>();
  if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(data->ahCtor.Value()))
    ThrowArgument(v.Env(), "ah", std::string(call) + ": expected a NativeAh");
  return Ah::Unwrap(v.As<Napi::Object>())->Handle(call);
}

void ReadAhAttr(const Napi::Object &ah, ibv_ah_attr &a) {
  Napi::Env env = ah.Env();
  a.dlid = static_cast<uint16_t>(ReadU32Prop(ah, "dlid", 0, 0xffff));
  a.sl = static_cast<uint8_t>(ReadU32Prop(ah, "sl", 0, 15));
  a.src_path_bits = static_cast<uint8_t>(ReadU32Prop(ah, "srcPathBits", 0, 127));
  a.static_rate = static_cast<uint8_t>(ReadU32Prop(ah, "staticRate", 0, 255));
  a.port_num = static_cast<uint8_t>(ReadU32Prop(ah, "portNum", 1, 255));
  Napi::Value grhv = ah.Get("grh");
  if (grhv.IsObject()) {
    Napi::Object grh = grhv.As<Napi::Object>();
    a.is_global = 1;
    Napi::Value dgid = grh.Get("dgid");
    if (!dgid.IsBuffer() || dgid.As<Napi::Buffer<uint8_t>>().Length() != 16)
      ThrowArgument(env, "grh.dgid", "must be a 16-byte Buffer");
    std::memcpy(a.grh.dgid.raw, dgid.As<Napi::Buffer<uint8_t>>().Data(), 16);
    a.grh.flow_label = ReadU32Prop(grh, "flowLabel", 0, 0xfffff);
    a.grh.sgid_index = static_cast<uint8_t>(ReadU32Prop(grh, "sgidIndex", 0, 255));
    a.grh.hop_limit = static_cast<uint8_t>(ReadU32Prop(grh, "hopLimit", 64, 255));
    a.grh.traffic_class = static_cast<uint8_t>(ReadU32Prop(grh, "trafficClass", 0, 255));
  }
}

void RegisterAh(Napi::Env env, Napi::Object exports) {
  AddonData *data = env.GetInstanceData<AddonData>();
  Napi::Function ctor = Ah::Init(env);
  data->ahCtor = Napi::Persistent(ctor);
  exports.Set("NativeAh", ctor);
}

}  // namespace rdma_interop
