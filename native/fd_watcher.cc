// Watches a file descriptor (a completion channel or an rdma_cm event channel) for
// readability on the libuv loop, and calls a JS function when it becomes readable.
// No thread ever blocks: the JS side then reads the event with a non-blocking call.
#include <uv.h>

#include "common.h"

namespace rdma_interop {

namespace {

class FdWatcher : public Napi::ObjectWrap<FdWatcher> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeFdWatcher",
                       {
                           InstanceMethod<&FdWatcher::Start>("start"),
                           InstanceMethod<&FdWatcher::Stop>("stop"),
                           InstanceMethod<&FdWatcher::Close>("close"),
                           InstanceAccessor<&FdWatcher::Active>("active"),
                       });
  }

  // new NativeFdWatcher(fd, onReadable(status: number))
  explicit FdWatcher(const Napi::CallbackInfo &info)
      : Napi::ObjectWrap<FdWatcher>(info), asyncContext_(info.Env(), "rdma_interop.FdWatcher") {
    Napi::Env env = info.Env();
    int fd = static_cast<int>(ReadU32(info[0], "fd", 0x7fffffff));
    if (!info[1].IsFunction()) throw Napi::TypeError::New(env, "onReadable must be a function");
    callback_ = Napi::Persistent(info[1].As<Napi::Function>());
    uv_loop_t *loop = nullptr;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr)
      throw Napi::Error::New(env, "no libuv loop");
    poll_ = new uv_poll_t;
    int ret = uv_poll_init(loop, poll_, fd);
    if (ret != 0) {
      delete poll_;
      poll_ = nullptr;
      ThrowVerbs(env, "uv_poll_init", "", -ret);
    }
    poll_->data = this;
  }

  ~FdWatcher() override { Release(); }

 private:
  static void OnPoll(uv_poll_t *handle, int status, int /*events*/) {
    auto *self = static_cast<FdWatcher *>(handle->data);
    if (self == nullptr || self->callback_.IsEmpty()) return;
    Napi::Env env = self->Env();
    Napi::HandleScope scope(env);
    try {
      self->callback_.MakeCallback(env.Global(), {Napi::Number::New(env, status)}, self->asyncContext_);
    } catch (const Napi::Error &e) {
      // Surface as an uncaught exception instead of unwinding through libuv.
      napi_fatal_exception(env, e.Value());
    }
  }

  void Release() {
    if (poll_ == nullptr) return;
    poll_->data = nullptr;
    uv_poll_stop(poll_);
    // The handle memory must outlive uv_close; free it in the close callback.
    uv_close(reinterpret_cast<uv_handle_t *>(poll_),
             [](uv_handle_t *h) { delete reinterpret_cast<uv_poll_t *>(h); });
    poll_ = nullptr;
    active_ = false;
  }

  Napi::Value Start(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (poll_ == nullptr) ThrowClosed(env, "uv_poll_start", "", "fd watcher");
    if (!active_) {
      int ret = uv_poll_start(poll_, UV_READABLE, OnPoll);
      if (ret != 0) ThrowVerbs(env, "uv_poll_start", "", -ret);
      active_ = true;
    }
    return env.Undefined();
  }

  Napi::Value Stop(const Napi::CallbackInfo &info) {
    if (poll_ != nullptr && active_) uv_poll_stop(poll_);
    active_ = false;
    return info.Env().Undefined();
  }

  // Also drops the callback: a persistent reference to it would keep whatever it closes
  // over (a CQ, an event channel) from ever being collected.
  Napi::Value Close(const Napi::CallbackInfo &info) {
    Release();
    callback_.Reset();
    return info.Env().Undefined();
  }

  Napi::Value Active(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), active_);
  }

  Napi::FunctionReference callback_;
  Napi::AsyncContext asyncContext_;
  uv_poll_t *poll_ = nullptr;
  bool active_ = false;
};

}  // namespace

void RegisterFdWatcher(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeFdWatcher", FdWatcher::Init(env));
}

}  // namespace rdma_interop
