// The one base of every native verbs class: Resource<Self, Handle> wraps a shared
// ResourceHandle (common.h) in a JS object and gives it what every verbs object has the
// same way: `closed`, `close(cascade)` (live children released first with cascade,
// VerbsError EBUSY without, as ibv_dealloc_pd and ibv_destroy_cq answer themselves),
// VerbsError EBADF for a call on a closed object, adoption of a handle made elsewhere
// (rdma_cm's QP and context, a CONNECT_REQUEST's cm_id), the checked unwrap of an
// argument (FromJs) and its registration on the addon's exports.
//
// A class derives as `class Pd : public Resource<Pd, PdHandle>` and gives its
// `static constexpr ResourceTraits kTraits` and, if it has any, its own methods in a
// public `static Properties Methods()`. It may hide, publicly, Busy(cascade) (another
// reason to refuse a close), OnClosed() (after close) and Device() (the device named in
// errors).
#pragma once

#include <typeindex>
#include <vector>

#include "common.h"

namespace rdma_interop {

/// What a Resource class says of itself.
struct ResourceTraits {
  const char *jsClass;  // the JS class: "NativePd"
  const char *arg;      // the argument's name in a VerbsArgumentError: "pd"
  const char *what;     // in EBADF messages: "protection domain"
  const char *destroy;  // the call close() reports: "ibv_dealloc_pd"
  const char *busy;     // why close(false) refuses while children live
};

template <typename Self, typename HandleType>
class Resource : public Napi::ObjectWrap<Self> {
 public:
  using Ptr = std::shared_ptr<HandleType>;
  using Properties = std::vector<Napi::ClassPropertyDescriptor<Self>>;

  /// The live handle, or VerbsError EBADF naming `call`.
  Ptr Handle(const char *call) {
    if (!handle_ || !handle_->Live())
      ThrowClosed(this->Env(), call, static_cast<Self *>(this)->Device(), Self::kTraits.what);
    return handle_;
  }

  /// The live handle behind a JS argument: VerbsArgumentError unless it is one of this
  /// class, VerbsError EBADF once closed.
  static Ptr FromJs(const Napi::Value &v, const char *call) {
    if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(Constructor(v.Env())))
      ThrowArgument(v.Env(), Self::kTraits.arg,
                    std::string(call) + ": expected a " + Self::kTraits.jsClass);
    return Self::Unwrap(v.As<Napi::Object>())->Handle(call);
  }

  /// A new JS object around a handle made elsewhere (the constructor adopts it).
  static Napi::Object Adopt(Napi::Env env, const Ptr &handle) {
    Ptr copy = handle;
    return Constructor(env).New({Napi::External<Ptr>::New(env, &copy)});
  }

  /// Defines the JS class (its methods, `close` and `closed`) on `exports`.
  static void Register(Napi::Env env, Napi::Object exports) {
    Properties props = Self::Methods();
    props.push_back(Self::InstanceMethod("close", &Resource::Close));
    props.push_back(Self::InstanceAccessor("closed", &Resource::Closed, nullptr));
    Napi::Function ctor = Self::DefineClass(env, Self::kTraits.jsClass, props);
    AddonData *data = env.GetInstanceData<AddonData>();
    data->classes[std::type_index(typeid(Self))] = Napi::Persistent(ctor);
    exports.Set(Self::kTraits.jsClass, ctor);
  }

 protected:
  explicit Resource(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Self>(info) {
    (void)kRegistered;
  }

  /// Adopts the handle when the constructor was given one (see Adopt); true if so.
  bool Adopted(const Napi::CallbackInfo &info) {
    if (!info[0].IsExternal()) return false;
    Attach(*info[0].As<Napi::External<Ptr>>().Data());
    return true;
  }

  /// Takes a new handle (its device named from now on, after close too).
  void Attach(Ptr handle) {
    device_ = handle->device;
    handle_ = std::move(handle);
  }

  static Properties Methods() { return {}; }
  /// A reason to refuse close(cascade) whatever the children; none by default.
  const char *Busy(bool) const { return nullptr; }
  void OnClosed() {}
  const std::string &Device() const { return device_; }

  Ptr handle_;
  std::string device_;

 private:
  static Napi::Function Constructor(Napi::Env env) {
    return env.GetInstanceData<AddonData>()->classes.at(std::type_index(typeid(Self))).Value();
  }

  Napi::Value Closed(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), !handle_ || !handle_->Live());
  }

  // close(cascade): with cascade, the live children are released first, in their order;
  // without, they make it refuse with EBUSY (nothing released). Idempotent once closed.
  Napi::Value Close(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Self &self = *static_cast<Self *>(this);
    if (handle_ && handle_->Live()) {
      bool cascade = info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value();
      const char *busy = self.Busy(cascade);
      if (busy == nullptr && handle_->Pinned() != 0) busy = "a call still uses it";
      if (busy == nullptr && !cascade && handle_->children.AnyLive()) busy = Self::kTraits.busy;
      if (busy != nullptr) ThrowVerbs(env, Self::kTraits.destroy, self.Device(), EBUSY, busy);
      if (int ret = handle_->children.ReleaseAll(); ret != 0)
        ThrowVerbs(env, Self::kTraits.destroy, self.Device(), ret, "releasing a child failed");
      CheckIbv(env, Self::kTraits.destroy, self.Device(), handle_->Destroy());
    }
    handle_.reset();  // lets the parents go
    self.OnClosed();
    return env.Undefined();
  }

  // Adds Register to the list module.cc runs, once per class, when the addon loads.
  static inline const bool kRegistered = (Registrars().push_back(&Register), true);
};

}  // namespace rdma_interop
