// The memory path (js_memory.h): decided at load, exported, and the shared blocks.
#include "js_memory.h"

#include <cstdlib>

namespace rdma_interop {

MemoryPathState &MemoryPathOf(Napi::Env env) { return env.GetInstanceData<AddonData>()->memoryPath; }

void InitMemoryPath(Napi::Env env) {
  MemoryPathState &state = MemoryPathOf(env);
#ifdef NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
  state = {MemoryPath::kV8, "compile-time", false};
#else
  // The probe: one byte of static memory, no finalizer (nothing to free). A sandboxed
  // Node answers napi_no_external_buffers_allowed (node_api.cc, V8_ENABLE_SANDBOX).
  static char probeByte = 0;
  napi_value ab = nullptr;
  if (napi_create_external_arraybuffer(env, &probeByte, 1, nullptr, nullptr, &ab) ==
      napi_no_external_buffers_allowed) {
    state = {MemoryPath::kV8, "refused", false};
    return;
  }
  const char *force = std::getenv("RDMA_INTEROP_NO_EXTERNAL_BUFFERS");
  if (force != nullptr && force[0] != '\0' && std::strcmp(force, "0") != 0)
    state = {MemoryPath::kV8, "environment", true};
  else
    state = {MemoryPath::kExternal, "default", true};
#endif
}

namespace {

const char *PathName(MemoryPath p) { return p == MemoryPath::kV8 ? "v8" : "external"; }

Napi::Value MemoryPathValue(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  const MemoryPathState &state = MemoryPathOf(env);
  Napi::Object out = Napi::Object::New(env);
  out.Set("path", PathName(state.path));
  out.Set("reason", state.reason);
  out.Set("externalAvailable", state.externalAvailable);
  return out;
}

// setMemoryPath('external' | 'v8'): for tests and the bench, which measure both paths in
// one process. 'external' where external buffers are compiled out or refused throws.
Napi::Value SetMemoryPath(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string name = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  MemoryPathState &state = MemoryPathOf(env);
  if (name == "v8") {
    state.path = MemoryPath::kV8;
    state.reason = "chosen";
  } else if (name == "external") {
    if (!state.externalAvailable)
      ThrowVerbs(env, "napi_create_external_arraybuffer", "", EOPNOTSUPP,
                 std::string("external buffers are not available here (") + state.reason + ")");
    state.path = MemoryPath::kExternal;
    state.reason = "chosen";
  } else {
    ThrowArgument(env, "path", "must be 'external' or 'v8'");
  }
  return env.Undefined();
}

// setUntransferableMarker(markAsUntransferable): src/verbs/native.ts, once.
Napi::Value SetUntransferableMarker(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsFunction()) ThrowArgument(env, "marker", "must be a function");
  env.GetInstanceData<AddonData>()->markUntransferable = Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

}  // namespace

void RegisterMemoryPath(Napi::Env env, Napi::Object exports) {
  exports.Set("memoryPath", Napi::Function::New(env, MemoryPathValue, "memoryPath"));
  exports.Set("setMemoryPath", Napi::Function::New(env, SetMemoryPath, "setMemoryPath"));
  exports.Set("setUntransferableMarker",
              Napi::Function::New(env, SetUntransferableMarker, "setUntransferableMarker"));
}

Napi::ArrayBuffer NewV8ArrayBuffer(Napi::Env env, size_t bytes, void **data) {
  napi_value ab = nullptr;
  // Zero-filled: napi_create_arraybuffer is v8::ArrayBuffer::New, which initialises.
  if (napi_create_arraybuffer(env, bytes, data, &ab) != napi_ok || *data == nullptr)
    ThrowVerbs(env, "napi_create_arraybuffer", "", ENOMEM);
  Napi::FunctionReference &mark = env.GetInstanceData<AddonData>()->markUntransferable;
  if (!mark.IsEmpty()) mark.Call({ab});  // a throw propagates: nothing was handed out yet
  return Napi::ArrayBuffer(env, ab);
}

void SharedBlock::Create(Napi::Env env, size_t bytes, Napi::ArrayBuffer *out) {
  Release();
  bytes_ = bytes;
#ifndef NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
  if (MemoryPathOf(env).path == MemoryPath::kExternal) {
    auto owned = std::make_shared<std::vector<uint64_t>>((bytes + 7) / 8, 0u);
    auto *ref = new std::shared_ptr<std::vector<uint64_t>>(owned);
    if (NewExternalArrayBuffer(env, owned->data(), bytes, ref, out)) {
      owned_ = std::move(owned);
      return;
    }
    // Refused: the V8-allocated path below (the environment now uses it throughout).
  }
#endif
  void *data = nullptr;
  *out = NewV8ArrayBuffer(env, bytes, &data);
  // V8's allocator (malloc/calloc or the sandbox's) aligns to at least 8: the blocks'
  // u64 and f64 fields rely on it.
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0)
    ThrowVerbs(env, "napi_create_arraybuffer", "", EINVAL, "V8 returned memory not 8-byte aligned");
  if (napi_create_reference(env, *out, 1, &ref_) != napi_ok)
    throw Napi::Error::New(env, "napi_create_reference failed");
  env_ = env;
}

void *SharedBlock::Data(napi_env env, const char *call) const {
  if (owned_) return owned_->data();
  napi_value ab = nullptr;
  void *data = nullptr;
  size_t length = 0;
  if (ref_ == nullptr || napi_get_reference_value(env, ref_, &ab) != napi_ok || ab == nullptr ||
      napi_get_arraybuffer_info(env, ab, &data, &length) != napi_ok || data == nullptr ||
      length < bytes_)
    ThrowVerbs(Napi::Env(env), call, "", EBADF,
               "the memory shared with JavaScript was detached (transferred away); prepare again");
  return data;
}

void SharedBlock::Release() {
  if (ref_ != nullptr) napi_delete_reference(env_, ref_);
  ref_ = nullptr;
  owned_.reset();
}

}  // namespace rdma_interop
