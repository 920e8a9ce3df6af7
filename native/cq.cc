// Completion queue, optionally with its own completion channel. poll(n) drains up to
// n work completions synchronously; the channel fd (non-blocking) is what the JS side
// watches on the libuv loop (see fd_watcher.cc) to await completions without a thread.
#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>

#include "bound_call.h"
#include "resource.h"
#include "wc_words.h"

namespace rdma_interop {

namespace {

constexpr size_t kWcWords = wc_word::kCount;

class Cq : public Resource<Cq, CqHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeCq", "cq", "completion queue", "ibv_destroy_cq",
                                          "a QP still uses this CQ"};

  static Properties Methods() {
    return {
        InstanceMethod<&Cq::Poll>("poll"),
        InstanceMethod<&Cq::RequestNotify>("requestNotify"),
        InstanceMethod<&Cq::GetEvent>("getEvent"),
        InstanceMethod<&Cq::GetEvents>("getEvents"),
        InstanceMethod<&Cq::ArmAndPoll>("armAndPoll"),
        InstanceMethod<&Cq::BoundPoll>("boundPoll"),
        InstanceAccessor<&Cq::ChannelFd>("channelFd"),
        InstanceAccessor<&Cq::Cqe>("cqe"),
        InstanceAccessor<&Cq::Key>("key"),
    };
  }

  // new NativeCq(context, cqe, withChannel)
  explicit Cq(const Napi::CallbackInfo &info) : Resource(info) {
    if (Adopted(info)) return;  // ibv_create_cq_ex's (cq_ext.cc)
    Napi::Env env = info.Env();
    ContextPtr ctx = ContextFromJs(info[0], "ibv_create_cq");
    uint32_t cqe = ReadU32(info[1], "cqe", 0x7fffffff);
    if (!info[2].IsBoolean()) ThrowArgument(env, "withChannel", "must be a boolean");
    bool withChannel = info[2].As<Napi::Boolean>().Value();
    auto h = std::make_shared<CqHandle>();
    h->ctx = ctx;
    h->device = ctx->device;
    if (withChannel) {
      auto ch = std::make_shared<CompChannelHandle>();
      ch->ctx = ctx;
      ch->channel = ibv_create_comp_channel(ctx->ctx);
      if (ch->channel == nullptr)
        ThrowVerbs(env, "ibv_create_comp_channel", h->device, errno != 0 ? errno : ENOMEM);
      // Non-blocking, so that reading an event on the JS thread can never stall it.
      int flags = fcntl(ch->channel->fd, F_GETFL);
      if (flags < 0 || fcntl(ch->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        ThrowVerbs(env, "fcntl", h->device, errno);
      h->channel = ch;
    }
    h->cq = ibv_create_cq(ctx->ctx, static_cast<int>(cqe), nullptr,
                          h->channel ? h->channel->channel : nullptr, 0);
    if (h->cq == nullptr) ThrowVerbs(env, "ibv_create_cq", h->device, errno != 0 ? errno : ENOMEM);
    ctx->children.Add(h);
    Attach(h);
  }

 private:
  Napi::Value ChannelFd(const Napi::CallbackInfo &info) {
    if (!handle_ || !handle_->channel || handle_->channel->channel == nullptr)
      return Napi::Number::New(info.Env(), -1);
    return Napi::Number::New(info.Env(), handle_->channel->channel->fd);
  }
  // The CQ's identity in async events (IBV_EVENT_CQ_ERR names the ibv_cq pointer).
  Napi::Value Key(const Napi::CallbackInfo &info) {
    return U64(info.Env(), handle_ ? reinterpret_cast<uintptr_t>(handle_->cq) : 0);  // 0 once closed
  }
  Napi::Value Cqe(const Napi::CallbackInfo &info) {
    return Napi::Number::New(info.Env(), handle_ && handle_->cq != nullptr ? handle_->cq->cqe : 0);
  }

  // poll(words: Uint32Array, max?, spinLimit?) -> n. Fills WC_WORDS u32 per completion, as many as fit:
  // building JS objects field by field through N-API cost more than the poll itself, so
  // the TS side (src/verbs/completion.ts) decodes this fixed layout instead.
  Napi::Value Poll(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CqPtr h = Handle("ibv_poll_cq");
    // spinLimit: busy-poll here, in C++, until something arrives or this many empty polls
    // passed. A busy loop in JS pays an N-API transition per empty poll, which under
    // emulation costs more than the round trip being waited for.
    uint32_t spinLimit = 0;
    if (info.Length() > 2 && !info[2].IsUndefined())
      spinLimit = ReadU32(info[2], "spinLimit", 0xffffffffu);
    return Napi::Number::New(env, PollInto(env, h, info, spinLimit));
  }

  // armAndPoll(words, max?) -> n: ibv_req_notify_cq (next completion), then one poll, in
  // one call: what a waiter does before it sleeps (a completion that came before the arm
  // raises no event, so it must be polled after arming).
  Napi::Value ArmAndPoll(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CqPtr h = Handle("ibv_req_notify_cq");
    if (!h->channel) ThrowVerbs(env, "ibv_req_notify_cq", device_, EINVAL, "the CQ has no completion channel");
    int n = PollInto(env, h, info, 0, /*armFirst=*/true);
    return Napi::Number::New(env, n);
  }

  // Polls into info[0] (a Uint32Array, WC_WORDS per completion) at most info[1] and 256
  // completions; with armFirst, arms the CQ after the arguments were checked.
  int PollInto(Napi::Env env, const CqPtr &h, const Napi::CallbackInfo &info, uint32_t spinLimit,
               bool armFirst = false) {
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
      ThrowArgument(env, "completions", "poll needs a Uint32Array");
    auto words = info[0].As<Napi::Uint32Array>();
    size_t max = words.ElementLength() / kWcWords;
    if (!info[1].IsUndefined()) max = std::min<size_t>(max, ReadU32(info[1], "max", 256));
    if (max == 0) ThrowArgument(env, "completions", "the Uint32Array holds no completion");
    if (armFirst) CheckIbv(env, "ibv_req_notify_cq", device_, ibv_req_notify_cq(h->cq, 0));
    return PollWords(env, *h, words.Data(), max, spinLimit);
  }

  // boundPoll() -> { memory, poll(max, spinLimit, atLeast) }: poll as a bound call (bound_call.h)
  // into memory of 256 completions the addon owns (`memory`, an ArrayBuffer of
  // WC_WORDS u32 per completion). Cq.poll, pollUntil and pollUntilCount use it.
  Napi::Value BoundPoll(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    auto state = std::make_unique<BoundPollState>();
    state->cq = Handle("ibv_poll_cq");
    Napi::Object out = Napi::Object::New(env);
    out.Set("memory", state->block.Create(env, 256 * kWcWords));
    out.Set("poll", BindCall(env, "poll", &BoundPollCall, std::move(state)));
    return out;
  }

  struct BoundPollState {
    CqPtr cq;
    WordBlock block;
    void Finalize(napi_env) { block.memory.Release(); }
  };

  // poll(max, spinLimit, atLeast) -> n, bound to one CQ and its memory.
  static napi_value BoundPollCall(napi_env env, napi_callback_info info) {
    return RunBound<BoundPollState, 3>(env, info, [env](BoundPollState &s, napi_value *argv) {
      uint32_t max = BoundU32(env, argv[0], "max", 256);
      uint32_t spinLimit = BoundU32(env, argv[1], "spinLimit", 0xffffffffu);
      uint32_t atLeast = BoundU32(env, argv[2], "atLeast", 256);
      if (max == 0) ThrowArgument(Napi::Env(env), "max", "must be at least 1");
      if (!s.cq->Live()) ThrowClosed(Napi::Env(env), "ibv_poll_cq", s.cq->device, "completion queue");
      napi_value out = nullptr;
      uint32_t *words = s.block.Data(env, "ibv_poll_cq");
      int n = PollWords(Napi::Env(env), *s.cq, words, max, spinLimit, atLeast);
      napi_create_uint32(env, static_cast<uint32_t>(n), &out);
      return out;
    });
  }

  // Polls at most `max` (and 256) completions into `out` (kWcWords each), the stashed ones
  // of a round trip first; busy-polls until `atLeast` of them came or `spinLimit` polls in
  // a row found nothing (then returns what it has). Waiting here for a whole batch (a
  // pollUntil(16) of receives that come one by one) costs one N-API call, not one each.
  static int PollWords(Napi::Env env, CqHandle &h, uint32_t *out, size_t max, uint32_t spinLimit,
                       size_t atLeast = 1) {
    if (max > 256) max = 256;
    if (atLeast > max) atLeast = max;
    ibv_wc wcs[256];
    size_t n = 0;
    // Completions a round trip set aside come first (they were polled earlier).
    while (!h.stash.empty() && n < max) {
      wcs[n++] = h.stash.front();
      h.stash.pop_front();
    }
    uint32_t empty = 0;
    // At least one poll, even with nothing to wait for (atLeast 0).
    for (bool first = true; first || n < atLeast; first = false) {
      if (n == max) break;
      int got = ibv_poll_cq(h.cq, static_cast<int>(max - n), wcs + n);
      if (got < 0) ThrowVerbs(env, "ibv_poll_cq", h.device, got == -1 ? EIO : -got);
      if (got > 0) {
        n += static_cast<size_t>(got);
        empty = 0;
      } else if (empty++ >= spinLimit) {
        break;
      }
    }
    for (size_t i = 0; i < n; i++) WriteWcWords(out + i * kWcWords, wcs[i]);
    return static_cast<int>(n);
  }

  Napi::Value RequestNotify(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CqPtr h = Handle("ibv_req_notify_cq");
    if (!h->channel) ThrowVerbs(env, "ibv_req_notify_cq", device_, EINVAL, "the CQ has no completion channel");
    bool solicitedOnly = info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value();
    CheckIbv(env, "ibv_req_notify_cq", device_, ibv_req_notify_cq(h->cq, solicitedOnly ? 1 : 0));
    return env.Undefined();
  }

  // Reads one completion event if one is pending (non-blocking); true if one was read.
  Napi::Value GetEvent(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CqPtr h = Handle("ibv_get_cq_event");
    if (!h->channel) ThrowVerbs(env, "ibv_get_cq_event", device_, EINVAL, "the CQ has no completion channel");
    ibv_cq *evCq = nullptr;
    void *evCtx = nullptr;
    if (ibv_get_cq_event(h->channel->channel, &evCq, &evCtx) != 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Napi::Boolean::New(env, false);
      ThrowVerbs(env, "ibv_get_cq_event", device_, errno != 0 ? errno : EIO);
    }
    // Acknowledge at once: ibv_destroy_cq waits for every event to be acknowledged.
    ibv_ack_cq_events(evCq, 1);
    return Napi::Boolean::New(env, true);
  }

  // Reads and acknowledges every pending completion event (non-blocking) in one call;
  // returns how many there were. One wake-up of the channel's fd costs one call.
  Napi::Value GetEvents(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CqPtr h = Handle("ibv_get_cq_event");
    if (!h->channel) ThrowVerbs(env, "ibv_get_cq_event", device_, EINVAL, "the CQ has no completion channel");
    uint32_t count = 0;
    for (;;) {
      ibv_cq *evCq = nullptr;
      void *evCtx = nullptr;
      if (ibv_get_cq_event(h->channel->channel, &evCq, &evCtx) != 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        int err = errno != 0 ? errno : EIO;
        if (count > 0) ibv_ack_cq_events(h->cq, count);
        ThrowVerbs(env, "ibv_get_cq_event", device_, err);
      }
      ++count;
    }
    // One acknowledgement for all (ibv_destroy_cq waits for every event to be acknowledged).
    if (count > 0) ibv_ack_cq_events(h->cq, count);
    return Napi::Number::New(env, count);
  }
};

}  // namespace

CqPtr CqFromJs(const Napi::Value &v, const char *call) { return Cq::FromJs(v, call); }
Napi::Object NewCqObject(Napi::Env env, const CqPtr &cq) { return Cq::Adopt(env, cq); }

}  // namespace rdma_interop
