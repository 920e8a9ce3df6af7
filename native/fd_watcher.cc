// Watches a file descriptor (a completion channel or an rdma_cm event channel) for
// readability on the libuv loop, and calls a JS function when it becomes readable.
// No thread ever blocks: the JS side then reads the event with a non-blocking call.
//
// Teardown: a worker thread's environment can end (process.exit in the worker,
// worker.terminate()) while a watcher is open. Node then unloads the addon's shared
// object once the environment is freed, so a uv_close callback still queued on the
// loop would jump into unmapped code (the segfault in uv__finish_close under
// node::worker::Worker::Run). Every uv handle therefore lives in a PollBox guarded by
// an async environment cleanup hook (napi_add_async_cleanup_hook, N-API 8): on
// teardown the hook closes the handle, and Node keeps running the loop until the close
// callback has removed the hook, i.e. until nothing of ours is left on the loop.
//
// The handle polls a duplicate of the fd, closed with the handle: a watcher kept between
// waits (Cq, Context) may be finalized after the channel it watched was destroyed, and
// libuv must never stop or close a poll on an fd number that was closed and reused.
#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include "common.h"

namespace rdma_interop {

namespace {

class FdWatcher;

/// The uv handle and its cleanup hook; freed by the close callback, never before.
struct PollBox {
  uv_poll_t poll{};
  napi_async_cleanup_hook_handle hook = nullptr;
  FdWatcher *owner = nullptr;  // null once the handle is closing
  int fd = -1;                 // the duplicate the handle polls (closed with it)
  bool closing = false;
};

void OnBoxClosed(uv_handle_t *h) {
  auto *box = reinterpret_cast<PollBox *>(h);
  // Removing the hook both unregisters it (normal close) and tells Node that the
  // teardown step it started is over (environment exit).
  if (box->hook != nullptr) napi_remove_async_cleanup_hook(box->hook);
  delete box;
}

/// Stops and closes the handle once; the box frees itself in OnBoxClosed.
void CloseBox(PollBox *box) {
  if (box->closing) return;
  box->closing = true;
  box->owner = nullptr;
  uv_poll_stop(&box->poll);
  uv_close(reinterpret_cast<uv_handle_t *>(&box->poll), OnBoxClosed);
  // libuv is done with the fd once uv_close returned (the handle only waits for its
  // close callback): release the duplicate now, not a loop turn later.
  if (box->fd >= 0) close(box->fd);
  box->fd = -1;
}

class FdWatcher : public Napi::ObjectWrap<FdWatcher> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeFdWatcher",
                       {
                           InstanceMethod<&FdWatcher::Start>("start"),
                           InstanceMethod<&FdWatcher::Stop>("stop"),
                           InstanceMethod<&FdWatcher::Close>("close"),
                           InstanceMethod<&FdWatcher::Ref>("ref"),
                           InstanceMethod<&FdWatcher::Unref>("unref"),
                           InstanceAccessor<&FdWatcher::Active>("active"),
                       });
  }

  // new NativeFdWatcher(fd, onReadable(status: number))
  explicit FdWatcher(const Napi::CallbackInfo &info)
      : Napi::ObjectWrap<FdWatcher>(info), asyncContext_(info.Env(), "rdma_interop.FdWatcher") {
    Napi::Env env = info.Env();
    int fd = static_cast<int>(ReadU32(info[0], "fd", 0x7fffffff));
    if (!info[1].IsFunction()) ThrowArgument(env, "onReadable", "must be a function");
    callback_ = Napi::Persistent(info[1].As<Napi::Function>());
    uv_loop_t *loop = nullptr;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr)
      throw Napi::Error::New(env, "no libuv loop");
    auto box = std::make_unique<PollBox>();
    box->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (box->fd < 0) ThrowVerbs(env, "fcntl", "", errno);
    int ret = uv_poll_init(loop, &box->poll, box->fd);
    if (ret != 0) {
      close(box->fd);
      ThrowVerbs(env, "uv_poll_init", "", -ret);
    }
    box->owner = this;
    box->poll.data = box.get();
    if (napi_add_async_cleanup_hook(env, OnEnvExit, box.get(), &box->hook) != napi_ok) {
      // The handle was initialised: it must be closed through the loop, not deleted.
      CloseBox(box.release());
      throw Napi::Error::New(env, "napi_add_async_cleanup_hook failed");
    }
    box_ = box.release();
  }

  ~FdWatcher() override { Release(); }

 private:
  // The environment is ending: close the handle now; the JS object may be finalized
  // later (or never) and must not touch the box again.
  static void OnEnvExit(napi_async_cleanup_hook_handle /*hook*/, void *arg) {
    auto *box = static_cast<PollBox *>(arg);
    if (box->owner != nullptr) box->owner->box_ = nullptr;
    CloseBox(box);
  }

  static void OnPoll(uv_poll_t *handle, int status, int /*events*/) {
    auto *box = static_cast<PollBox *>(handle->data);
    FdWatcher *self = box != nullptr ? box->owner : nullptr;
    if (self == nullptr || self->callback_.IsEmpty()) return;
    Napi::Env env = self->Env();
    // Called by libuv, outside any N-API call: no C++ exception may leave this frame
    // (it would unwind through libuv into std::terminate). Every Napi call below can
    // throw, the scope's included, once the environment is ending.
    try {
      Napi::HandleScope scope(env);
      try {
        self->callback_.MakeCallback(env.Global(), {Napi::Number::New(env, status)}, self->asyncContext_);
      } catch (const Napi::Error &e) {
        // Surface as an uncaught exception instead of unwinding through libuv.
        napi_fatal_exception(env, e.Value());
      }
    } catch (...) {
      // The environment can no longer run JavaScript: nobody is left to tell.
    }
  }

  void Release() {
    active_ = false;
    if (box_ == nullptr) return;
    PollBox *box = box_;
    box_ = nullptr;
    CloseBox(box);
  }

  Napi::Value Start(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (box_ == nullptr) ThrowClosed(env, "uv_poll_start", "", "fd watcher");
    if (!active_) {
      int ret = uv_poll_start(&box_->poll, UV_READABLE, OnPoll);
      if (ret != 0) ThrowVerbs(env, "uv_poll_start", "", -ret);
      active_ = true;
    }
    return env.Undefined();
  }

  Napi::Value Stop(const Napi::CallbackInfo &info) {
    if (box_ != nullptr && active_) uv_poll_stop(&box_->poll);
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

  // Whether the watcher keeps the event loop alive (it does by default, like a socket).
  Napi::Value Ref(const Napi::CallbackInfo &info) {
    if (box_ != nullptr) uv_ref(reinterpret_cast<uv_handle_t *>(&box_->poll));
    return info.Env().Undefined();
  }
  Napi::Value Unref(const Napi::CallbackInfo &info) {
    if (box_ != nullptr) uv_unref(reinterpret_cast<uv_handle_t *>(&box_->poll));
    return info.Env().Undefined();
  }

  Napi::Value Active(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), active_);
  }

  Napi::FunctionReference callback_;
  Napi::AsyncContext asyncContext_;
  PollBox *box_ = nullptr;  // null once closed (by close(), finalization or env exit)
  bool active_ = false;
};

}  // namespace

void RegisterFdWatcher(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeFdWatcher", FdWatcher::Init(env));
}

}  // namespace rdma_interop
