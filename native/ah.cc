// Address handle (ibv_create_ah / ibv_destroy_ah): where a UD send goes.
#include "resource.h"

namespace rdma_interop {

namespace {

class Ah : public Resource<Ah, AhHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeAh", "ah", "address handle", "ibv_destroy_ah", ""};

  // new NativeAh(pd, { portNum, sl, grh: { dgid, sgidIndex, hopLimit, ... }, dlid })
  explicit Ah(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    PdPtr pd = PdFromJs(info[0], "ibv_create_ah");
    if (!info[1].IsObject()) ThrowArgument(env, "attr", "ibv_create_ah: attributes must be an object");
    ibv_ah_attr a{};
    ReadAhAttr(info[1].As<Napi::Object>(), a);
    auto h = std::make_shared<AhHandle>();
    h->device = pd->device;
    h->ah = ibv_create_ah(pd->pd, &a);
    if (h->ah == nullptr) ThrowVerbs(env, "ibv_create_ah", h->device, errno != 0 ? errno : EINVAL);
    h->pd = pd;
    pd->children.Add(h);
    Attach(h);
  }

  // A prepared chain may still point at it.
  const char *Busy(bool) const {
    return handle_.use_count() > 1 ? "a prepared send list still uses this AH" : nullptr;
  }
};

}  // namespace

AhPtr AhFromJs(const Napi::Value &v, const char *call) { return Ah::FromJs(v, call); }

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

}  // namespace rdma_interop
