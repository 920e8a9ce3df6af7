// The rdma-core >= 45 FLUSH names (flush.h) as data for the TypeScript tables.
#include "flush.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

namespace rdma_interop {
namespace flush {

static_assert(sizeof(QpEx45) == sizeof(ibv_qp_ex) + sizeof(void *),
              "rdma-core 45 appended exactly one function pointer to struct ibv_qp_ex");

std::string LibraryVersion() {
  static const std::string version = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&ibv_get_device_list), &info) == 0 || info.dli_fname == nullptr)
      return std::string();
    char real[PATH_MAX];
    if (realpath(info.dli_fname, real) == nullptr) return std::string();
    // .../libibverbs.so.1.14.56.1 -> "56.1": the last two numbers are rdma-core's version.
    std::string name(real);
    const std::string marker = "libibverbs.so.";
    size_t at = name.rfind(marker);
    if (at == std::string::npos) return std::string();
    std::string tail = name.substr(at + marker.size());  // 1.14.56.1
    size_t last = tail.rfind('.');
    if (last == std::string::npos || last == 0) return std::string();
    size_t prev = tail.rfind('.', last - 1);
    if (prev == std::string::npos) return std::string();
    return tail.substr(prev + 1);
  }();
  return version;
}

bool LibraryHasFlush() {
  std::string v = LibraryVersion();
  return !v.empty() && std::atoi(v.c_str()) >= 45;
}

Napi::Object Constants(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  auto set = [&](const char *name, double v) { o.Set(name, Napi::Number::New(env, v)); };
  set("IBV_WR_FLUSH", kWrFlush);
  set("IBV_WC_FLUSH", kWcFlush);
  set("IBV_QP_EX_WITH_FLUSH", static_cast<double>(kQpExWithFlush));
  set("IBV_ACCESS_FLUSH_GLOBAL", kAccessFlushGlobal);
  set("IBV_ACCESS_FLUSH_PERSISTENT", kAccessFlushPersistent);
  set("IBV_FLUSH_GLOBAL", kPlacementGlobal);
  set("IBV_FLUSH_PERSISTENT", kPlacementPersistent);
  set("IBV_FLUSH_RANGE", kSelectivityRange);
  set("IBV_FLUSH_MR", kSelectivityMr);
  return o;
}

}  // namespace flush

void RegisterFlush(Napi::Env env, Napi::Object exports) {
  exports.Set("rdmaCore45Constants", flush::Constants(env));
  exports.Set("libibverbsVersion", Napi::Function::New(env, [](const Napi::CallbackInfo &info) {
                return Napi::String::New(info.Env(), flush::LibraryVersion());
              }));
}

}  // namespace rdma_interop
