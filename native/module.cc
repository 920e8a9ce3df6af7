// Module entry of the rdma_interop addon: one Register* per native object family.
#include "common.h"
#include "crc32c.h"

namespace rdma_interop {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData());
  RegisterErrors(env, exports);
  RegisterDevice(env, exports);
  RegisterPd(env, exports);
  RegisterMr(env, exports);
  RegisterCq(env, exports);
  RegisterQp(env, exports);
  RegisterFdWatcher(env, exports);
  RegisterCm(env, exports);
  RegisterAh(env, exports);
  RegisterConstants(env, exports);
  RegisterRoundTrip(env, exports);
  RegisterCrc32c(env, exports);
  return exports;
}

}  // namespace rdma_interop

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  return rdma_interop::Init(env, exports);
}

NODE_API_MODULE(rdma_interop, InitModule)
