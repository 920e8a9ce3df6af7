// Module entry of the rdma_interop addon: the native verbs classes (each registered
// itself, see Registrars in common.h), then one Register* per other family.
#include "common.h"
#include "crc32c.h"
#include "flush.h"
#include "js_memory.h"

namespace rdma_interop {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData());
  InitMemoryPath(env);
  RegisterErrors(env, exports);
  for (Registrar registrar : Registrars()) registrar(env, exports);
  RegisterDevice(env, exports);
  RegisterFdWatcher(env, exports);
  RegisterConstants(env, exports);
  RegisterRoundTrip(env, exports);
  RegisterCrc32c(env, exports);
  RegisterFlush(env, exports);
  RegisterMemoryPath(env, exports);
  return exports;
}

}  // namespace rdma_interop

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  return rdma_interop::Init(env, exports);
}

NODE_API_MODULE(rdma_interop, InitModule)
