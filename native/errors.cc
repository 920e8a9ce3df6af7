// VerbsError construction and argument readers. The JS class itself lives in
// src/verbs/errors.ts; the TS loader registers it here so native code throws real
// VerbsError instances (errno name, errno number, call, device, message).
#include <cmath>
#include <cstring>

#include "common.h"

namespace rdma_interop {

namespace {
struct ErrnoEntry {
  int value;
  const char *name;
};
// The errno values libibverbs, the providers and librdmacm are known to report.
const ErrnoEntry kErrnoNames[] = {
    {EPERM, "EPERM"},         {ENOENT, "ENOENT"},     {EIO, "EIO"},
    {EBADF, "EBADF"},         {EAGAIN, "EAGAIN"},     {ENOMEM, "ENOMEM"},
    {EACCES, "EACCES"},       {EFAULT, "EFAULT"},     {EBUSY, "EBUSY"},
    {EEXIST, "EEXIST"},       {ENODEV, "ENODEV"},     {EINVAL, "EINVAL"},
    {ENOSPC, "ENOSPC"},       {ERANGE, "ERANGE"},     {ENOSYS, "ENOSYS"},
    {ENODATA, "ENODATA"},     {ETIMEDOUT, "ETIMEDOUT"}, {EPROTO, "EPROTO"},
    {EOVERFLOW, "EOVERFLOW"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {EPROTONOSUPPORT, "EPROTONOSUPPORT"},
    {EAFNOSUPPORT, "EAFNOSUPPORT"}, {EADDRINUSE, "EADDRINUSE"}, {EADDRNOTAVAIL, "EADDRNOTAVAIL"},
    {ENETUNREACH, "ENETUNREACH"}, {ECONNABORTED, "ECONNABORTED"}, {ECONNRESET, "ECONNRESET"},
    {ENOTCONN, "ENOTCONN"},   {ECONNREFUSED, "ECONNREFUSED"}, {EHOSTUNREACH, "EHOSTUNREACH"},
    {EALREADY, "EALREADY"},   {EINPROGRESS, "EINPROGRESS"}, {ENOTSUP, "ENOTSUP"},
};
}  // namespace

const char *ErrnoName(int err) {
  for (const auto &e : kErrnoNames)
    if (e.value == err) return e.name;
  return nullptr;
}

void ThrowVerbs(Napi::Env env, const char *call, const std::string &device, int err,
                const std::string &detail, int badWrIndex) {
  const char *known = ErrnoName(err);
  std::string name = known != nullptr ? known : "E" + std::to_string(err);
  std::string message = std::string(call) + " failed: " + name + " (" + std::strerror(err) + ")";
  if (!device.empty()) message += " on " + device;
  if (!detail.empty()) message += ": " + detail;
  AddonData *data = env.GetInstanceData<AddonData>();
  if (data == nullptr || data->verbsErrorCtor.IsEmpty()) {
    // The loader always registers the class first; fall back to a plain Error.
    throw Napi::Error::New(env, message);
  }
  Napi::Object obj = data->verbsErrorCtor.New({
      Napi::String::New(env, name),
      Napi::Number::New(env, err),
      Napi::String::New(env, call),
      device.empty() ? env.Undefined() : Napi::String::New(env, device),
      Napi::String::New(env, message),
      badWrIndex >= 0 ? Napi::Number::New(env, badWrIndex) : env.Undefined(),
  });
  throw Napi::Error(env, obj);
}

void ThrowArgument(Napi::Env env, const std::string &field, const std::string &message) {
  AddonData *data = env.GetInstanceData<AddonData>();
  if (data == nullptr || data->verbsArgumentErrorCtor.IsEmpty()) {
    // The verbs loader always registers the class; an addon loaded bare gets a TypeError.
    throw Napi::TypeError::New(env, field + ": " + message);
  }
  Napi::Object obj = data->verbsArgumentErrorCtor.New(
      {Napi::String::New(env, field), Napi::String::New(env, message)});
  throw Napi::Error(env, obj);
}

void ThrowIntoJs(const Napi::Error &e) noexcept {
  try {
    e.ThrowAsJavaScriptException();
  } catch (...) {
    // napi_throw failed with an exception already pending (NODE_API_SWALLOW_UNTHROWABLE_
    // EXCEPTIONS, binding.gyp, covers the case of none pending): that one stays pending.
  }
}

uint64_t ReadU64(const Napi::Value &v, const char *what) {
  if (!v.IsBigInt()) ThrowArgument(v.Env(), what, "must be a bigint");
  bool lossless = false;
  uint64_t out = v.As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless) ThrowArgument(v.Env(), what, "must fit in 64 unsigned bits");
  return out;
}

uint32_t ReadU32(const Napi::Value &v, const char *what, uint64_t max) {
  if (!v.IsNumber()) ThrowArgument(v.Env(), what, "must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::floor(d) != d || d < 0 || d > static_cast<double>(max))
    ThrowArgument(v.Env(), what, "must be an integer in [0, " + std::to_string(max) + "]");
  return static_cast<uint32_t>(d);
}

uint32_t ReadU32Prop(const Napi::Object &o, const char *key, uint32_t fallback, uint64_t max) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return fallback;
  return ReadU32(v, key, max);
}

uint64_t ReadU64Prop(const Napi::Object &o, const char *key, uint64_t fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return fallback;
  return ReadU64(v, key);
}

bool ReadBoolProp(const Napi::Object &o, const char *key, bool fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsBoolean()) ThrowArgument(o.Env(), key, "must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

namespace {
// setVerbsErrorClass(VerbsError, VerbsArgumentError?): the classes native code throws.
Napi::Value SetVerbsErrorClass(const Napi::CallbackInfo &info) {
  if (!info[0].IsFunction()) throw Napi::TypeError::New(info.Env(), "expected a constructor");
  AddonData *data = info.Env().GetInstanceData<AddonData>();
  data->verbsErrorCtor = Napi::Persistent(info[0].As<Napi::Function>());
  if (info[1].IsFunction())
    data->verbsArgumentErrorCtor = Napi::Persistent(info[1].As<Napi::Function>());
  return info.Env().Undefined();
}

Napi::Value ErrnoNameJs(const Napi::CallbackInfo &info) {
  int err = static_cast<int>(ReadU32(info[0], "errno", 4095));
  const char *name = ErrnoName(err);
  return name != nullptr ? Napi::String::New(info.Env(), name) : info.Env().Undefined();
}
}  // namespace

void RegisterErrors(Napi::Env env, Napi::Object exports) {
  exports.Set("setVerbsErrorClass", Napi::Function::New(env, SetVerbsErrorClass));
  exports.Set("errnoName", Napi::Function::New(env, ErrnoNameJs));
}

}  // namespace rdma_interop
