// Send/Receive exchanges (issue 34): the ping-pong step "repost the receive the last
// message consumed, post the next message, wait for the peer's answer" in ONE native
// call, as a round trip (round_trip.cc) is "post, wait" in one. Under TCG one N-API
// transition costs a few microseconds against 19-25 us for a whole 64-byte exchange of
// two C programs (ibv_rc_pingpong), so the four calls of the everyday loop (postRecv,
// postSend, pollUntil twice) cost more than the exchange they carry.
//
// The send request and the receive request are parsed once, by the parsers every post
// uses (work_request.h: SendList::Parse of the send words the TS layer's packSendList
// writes, RecvChain::Unpack of the receive words its RecvPacker writes); each call then
// posts copies of them. The
// receive completion comes back in memory shared with JS (wc_words.h layout), so no
// object crosses N-API per exchange.
//
// Checked on every call: the QP and its CQs are live, every SGE of both requests lies in
// a live MR of the QP's PD (an lkey of a closed MR could be reused), the exchange was not
// released. Completions polled that are not the exchange's go to their CQ's stash, which
// NativeCq.poll and round trips take first: nothing is lost on a shared CQ.
//
// One bound function (bound_call.h) serves every operation: call(op, arg).
//   op 0 run(flags):    [repost, post when flags & 1,] busy-poll until the next receive
//                       completion of the QP (not with flags & 2: the send only) and the
//                       send's own completion (if signaled)
//   op 1 start(flags):   the same without spinning: one poll pass; if not done, arm the CQ
//                       (ibv_req_notify_cq) and poll once more (what came before arming)
//   op 2 resume():      after the channel's fd was readable: read and acknowledge the
//                       events, poll; if not done, arm and poll once more
//   op 3 postReceives(count): post `count` copies of the receive
//   op 4 release()
// -> 0 when the wait ended with success, the failed completion's status (1..255: it is in
// the block), or kNotYet (start / resume: wait for the channel).
#include <arpa/inet.h>
#include <errno.h>

#include <memory>
#include <string>
#include <vector>

#include "bound_call.h"
#include "clock.h"
#include "common.h"
#include "js_memory.h"
#include "wc_words.h"
#include "work_request.h"

namespace rdma_interop {

namespace {

constexpr uint32_t kNotYet = 0x100;

enum Op : uint32_t { kRun = 0, kStart = 1, kResume = 2, kPostReceives = 3, kRelease = 4 };

/// The memory shared with JS (src/verbs/exchange-native.ts EXCHANGE_LAYOUT, checked
/// against `exchangeLayout` by a host test).
struct ExchangeBlock {
  uint32_t wc[wc_word::kCount] = {};  // the receive completion, or the failed one
  uint32_t immData = 0;               // host order: the next sends' immediate
  uint32_t reserved = 0;
  double postedAtUs = 0;  // clock.h microseconds just before the last ibv_post_send
};

struct ExchangeState {
  QpRef qp;
  SendList send;    // one request, its chain built
  RecvChain recv;   // one request: the template of every receive posted
  std::vector<ibv_recv_wr> reposts;  // copies of the template, linked for one post
  uint64_t sendTag = 0;
  uint64_t recvTag = 0;
  uint32_t owed = 0;                 // receives consumed and not reposted yet
  uint32_t signalEvery = 1;          // one signaled send every this many
  uint32_t unsignaled = 0;
  uint32_t sendsOutstanding = 0;     // signaled own sends not completed yet
  bool waiting = false;              // posted; the wait has not ended (timeout, not yet)
  bool gotRecv = false;              // the current wait has its receive
  bool released = false;
  SharedBlock memory;
  ExchangeBlock *block = nullptr;    // for the call running now
  const FastClock &clock = FastClock::Get();
  int64_t timeoutTicks = 0;
  void Finalize(napi_env) { memory.Release(); }
};

[[noreturn]] void ThrowBadf(Napi::Env env, const ExchangeState &s, const char *call, const std::string &what) {
  ThrowVerbs(env, call, s.qp.device, EBADF, what);
}

void CheckUsable(Napi::Env env, const ExchangeState &s) {
  if (s.released) ThrowBadf(env, s, "ibv_post_send", "the exchange was released");
  if (!s.qp.owner->Live()) ThrowBadf(env, s, "ibv_post_send", "queue pair is closed");
  if (s.qp.sendCq->cq == nullptr || s.qp.recvCq->cq == nullptr)
    ThrowBadf(env, s, "ibv_poll_cq", "completion queue is closed");
  size_t bad = 0;
  if (!InlineSgesRegistered(*s.qp.pd, s.send.reqs[0].sges, &bad))
    ThrowBadf(env, s, "ibv_post_send", "send sgList[" + std::to_string(bad) + "] is not inside a live MR of the QP's PD");
  if (!InlineSgesRegistered(*s.qp.pd, s.recv.sges[0], &bad))
    ThrowBadf(env, s, "ibv_post_recv", "recv sgList[" + std::to_string(bad) + "] is not inside a live MR of the QP's PD");
}

/// Posts `count` copies of the receive; a refusal throws, the copies before it counted.
void PostCopies(Napi::Env env, ExchangeState &s, uint32_t count) {
  if (count == 0) return;
  const ibv_recv_wr &tmpl = s.recv.wrs[0];
  s.reposts.assign(count, tmpl);
  for (uint32_t i = 0; i < count; i++) s.reposts[i].next = i + 1 < count ? &s.reposts[i + 1] : nullptr;
  ibv_recv_wr *bad = nullptr;
  int ret = ibv_post_recv(s.qp.qp, s.reposts.data(), &bad);
  if (ret != 0) {
    long posted = bad != nullptr ? bad - s.reposts.data() : 0;
    if (s.owed >= static_cast<uint32_t>(posted)) s.owed -= static_cast<uint32_t>(posted);
    ThrowVerbs(env, "ibv_post_recv", s.qp.device, ret > 0 ? ret : -ret,
               "receive copy #" + std::to_string(posted) + " refused", static_cast<int>(posted));
  }
}

/// Starts a wait: reposts what the last one consumed and, with `post`, posts the send.
void Begin(Napi::Env env, ExchangeState &s, bool post, bool waitRecv) {
  if (s.waiting) return;  // the last wait did not end: continue it, post nothing
  if (s.owed != 0) {
    uint32_t n = s.owed;
    PostCopies(env, s, n);
    s.owed = 0;
  }
  if (post) {
    ibv_send_wr &wr = s.send.wrs[0];
    wr.imm_data = htonl(s.block->immData);
    bool signaled = ++s.unsignaled >= s.signalEvery;
    if (signaled) {
      wr.send_flags |= IBV_SEND_SIGNALED;
      s.unsignaled = 0;
    } else {
      wr.send_flags &= ~static_cast<unsigned>(IBV_SEND_SIGNALED);
    }
    ibv_send_wr *bad = nullptr;
    s.block->postedAtUs = s.clock.Microseconds(s.clock.Ticks());
    int ret = ibv_post_send(s.qp.qp, &wr, &bad);
    if (ret != 0) {
      if (!signaled) s.unsignaled--;
      ThrowVerbs(env, "ibv_post_send", s.qp.device, ret > 0 ? ret : -ret, "work request #0 refused", 0);
    }
    if (signaled) s.sendsOutstanding++;
  }
  s.waiting = true;
  s.gotRecv = !waitRecv;  // a send alone waits for nothing else
}

enum class Kind { kOwnSend, kReceive, kForeign };

Kind Classify(const ExchangeState &s, const ibv_wc &wc) {
  if (wc.qp_num != s.qp.qp->qp_num) return Kind::kForeign;
  bool ok = wc.status == IBV_WC_SUCCESS;
  // A failed completion carries no valid opcode: the send's tag tells it apart.
  if (wc.wr_id == s.sendTag && (!ok || (wc.opcode & IBV_WC_RECV) == 0)) return Kind::kOwnSend;
  if (ok ? (wc.opcode & IBV_WC_RECV) != 0 : true) return Kind::kReceive;
  return Kind::kForeign;  // a successful send of another request on this QP
}

/// Takes `wc` if it is the exchange's; returns 1 when it ends the wait with a failure
/// (written to the block), -1 when it is not the exchange's (the caller stashes it), 0.
int Take(ExchangeState &s, const ibv_wc &wc) {
  switch (Classify(s, wc)) {
    case Kind::kOwnSend:
      if (wc.status != IBV_WC_SUCCESS) {
        WriteWcWords(s.block->wc, wc);
        return 1;
      }
      if (s.sendsOutstanding > 0) s.sendsOutstanding--;
      return 0;
    case Kind::kReceive:
      if (s.gotRecv) return -1;  // the next wait's
      s.gotRecv = true;
      // A failed receive is not replaced: its QP is in error (a repost would be flushed).
      if (wc.wr_id == s.recvTag && wc.status == IBV_WC_SUCCESS) s.owed++;
      WriteWcWords(s.block->wc, wc);
      return wc.status != IBV_WC_SUCCESS ? 1 : 0;
    case Kind::kForeign: return -1;
  }
  return -1;
}

bool Done(const ExchangeState &s) { return s.gotRecv && s.sendsOutstanding == 0; }

/// What a stash holds of the exchange's, in order; true if the wait ended with a failure.
bool FromStash(ExchangeState &s, CqHandle &cq) {
  for (auto it = cq.stash.begin(); it != cq.stash.end();) {
    int r = Take(s, *it);
    if (r < 0) {
      ++it;
      continue;
    }
    it = cq.stash.erase(it);
    if (r > 0) return true;
  }
  return false;
}

/// One ibv_poll_cq of `cq`: 1 with a failure written, 0, or a negative provider error.
int PollPass(ExchangeState &s, CqHandle &cq) {
  ibv_wc wcs[8];
  int n = ibv_poll_cq(cq.cq, 8, wcs);
  if (n < 0) return n;
  int failed = 0;
  for (int i = 0; i < n; i++) {
    int r = failed != 0 ? -1 : Take(s, wcs[i]);
    if (r < 0) cq.stash.push_back(wcs[i]);
    if (r > 0) failed = 1;
  }
  return failed;
}

/// One pass over the exchange's CQs: 1 with a failure, 0 otherwise (throws on a provider error).
int PollBoth(Napi::Env env, ExchangeState &s) {
  CqHandle &rcq = *s.qp.recvCq;
  int r = PollPass(s, rcq);
  if (r == 0 && s.qp.sendCq != s.qp.recvCq && s.sendsOutstanding != 0) r = PollPass(s, *s.qp.sendCq);
  if (r < 0) ThrowVerbs(env, "ibv_poll_cq", s.qp.device, r == -1 ? EIO : -r);
  return r;
}

/// The wait's end: the status to return.
uint32_t End(ExchangeState &s, bool failed) {
  s.waiting = false;
  if (!failed) return 0;
  // A failed wait leaves the QP in error: what it still awaited will be flushed.
  s.sendsOutstanding = 0;
  uint32_t status = s.block->wc[wc_word::kStatus];
  return status == 0 ? 1 : status;
}

bool Stashed(ExchangeState &s) {
  bool failed = FromStash(s, *s.qp.recvCq);
  if (!failed && s.qp.sendCq != s.qp.recvCq) failed = FromStash(s, *s.qp.sendCq);
  return failed;
}

constexpr uint32_t kPost = 1;
constexpr uint32_t kSendOnly = 2;

uint32_t Run(Napi::Env env, ExchangeState &s, uint32_t flags) {
  Begin(env, s, (flags & kPost) != 0, (flags & kSendOnly) == 0);
  if (Stashed(s)) return End(s, true);
  int64_t deadline = 0;
  for (uint32_t spins = 0; !Done(s); ++spins) {
    if (PollBoth(env, s) > 0) return End(s, true);
    if ((spins & 63) == 63 && !Done(s)) {
      int64_t now = s.clock.Ticks();
      if (deadline == 0) deadline = now + s.timeoutTicks;
      else if (now >= deadline)
        ThrowVerbs(env, "ibv_poll_cq", s.qp.device, ETIMEDOUT,
                   "no receive completion within the exchange's timeout (still awaited: the next call "
                   "waits for it before posting)");
    }
  }
  return End(s, false);
}

/// Arms the CQ for the next completion, then polls what came before the arm.
uint32_t ArmAndCheck(Napi::Env env, ExchangeState &s) {
  CheckIbv(env, "ibv_req_notify_cq", s.qp.device, ibv_req_notify_cq(s.qp.recvCq->cq, 0));
  if (PollBoth(env, s) > 0) return End(s, true);
  return Done(s) ? End(s, false) : kNotYet;
}

uint32_t Start(Napi::Env env, ExchangeState &s, uint32_t flags) {
  Begin(env, s, (flags & kPost) != 0, (flags & kSendOnly) == 0);
  if (Stashed(s)) return End(s, true);
  if (PollBoth(env, s) > 0) return End(s, true);
  if (Done(s)) return End(s, false);
  return ArmAndCheck(env, s);
}

uint32_t Resume(Napi::Env env, ExchangeState &s) {
  if (!s.waiting) return 0;  // nothing awaited (a stray wake-up after the wait ended)
  CompChannelHandle &ch = *s.qp.recvCq->channel;
  uint32_t events = 0;
  for (;;) {
    ibv_cq *evCq = nullptr;
    void *evCtx = nullptr;
    if (ibv_get_cq_event(ch.channel, &evCq, &evCtx) != 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      int err = errno != 0 ? errno : EIO;
      if (events > 0) ibv_ack_cq_events(s.qp.recvCq->cq, events);
      ThrowVerbs(env, "ibv_get_cq_event", s.qp.device, err);
    }
    ++events;
  }
  // Acknowledged at once: ibv_destroy_cq waits for every event to be acknowledged.
  if (events > 0) ibv_ack_cq_events(s.qp.recvCq->cq, events);
  if (Stashed(s)) return End(s, true);
  if (PollBoth(env, s) > 0) return End(s, true);
  if (Done(s)) return End(s, false);
  return ArmAndCheck(env, s);
}

/// Resolves the block for one call and forgets it when the call ends, however it ends.
struct BlockScope {
  ExchangeState &s;
  BlockScope(napi_env env, ExchangeState &state) : s(state) {
    s.block = static_cast<ExchangeBlock *>(s.memory.Data(env, "ibv_post_send"));
  }
  ~BlockScope() { s.block = nullptr; }
};

napi_value ExchangeCall(napi_env env, napi_callback_info info) {
  return RunBound<ExchangeState, 2>(env, info, [env](ExchangeState &s, napi_value *argv) {
    Napi::Env e(env);
    uint32_t op = BoundU32(env, argv[0], "op", kRelease);
    uint32_t result = 0;
    if (op == kRelease) {
      s.released = true;
    } else {
      CheckUsable(e, s);
      BlockScope scope(env, s);
      switch (op) {
        case kRun: result = Run(e, s, BoundU32(env, argv[1], "flags", 3)); break;
        case kStart:
          if (!s.qp.recvCq->channel || s.qp.recvCq->channel->channel == nullptr || s.qp.sendCq != s.qp.recvCq)
            ThrowVerbs(e, "ibv_req_notify_cq", s.qp.device, EINVAL,
                       "waiting with events needs one CQ for sends and receives, with a channel");
          result = Start(e, s, BoundU32(env, argv[1], "flags", 3));
          break;
        case kResume: result = Resume(e, s); break;
        case kPostReceives: PostCopies(e, s, BoundU32(env, argv[1], "count", 0xffff)); break;
        default: break;
      }
    }
    napi_value out = nullptr;
    napi_create_uint32(env, result, &out);
    return out;
  });
}

// createExchange(qp, sendWords, sendHandles, recvWords, timeoutMs, signalEvery)
//   sendWords, sendHandles: one checked send request as packSendList packs it (send_word;
//   SEND, SEND_WITH_IMM or RDMA_WRITE_WITH_IMM, RC)
//   recvWords: one receive request packed by the TS layer's RecvPacker (recv_word)
// -> { call(op, arg): number, memory: ArrayBuffer }
Napi::Value CreateExchange(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  auto s = std::make_unique<ExchangeState>();
  s->qp = QpRefFromJs(info[0], "ibv_post_send");
  if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowArgument(env, "send", "the packed request must be a Uint32Array");
  Napi::Uint32Array words = info[1].As<Napi::Uint32Array>();
  s->send.Parse(env, words.Data(), words.ElementLength(), 1, info[2]);
  s->send.BuildChain();
  const ibv_send_wr &wr = s->send.wrs[0];
  switch (wr.opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_WRITE_WITH_IMM: break;
    default:
      ThrowVerbs(env, "ibv_post_send", s->qp.device, EOPNOTSUPP,
                 "an exchange sends SEND, SEND_WITH_IMM or RDMA_WRITE_WITH_IMM (what makes a receive completion)", 0);
  }
  if (s->send.reqs[0].ah || s->send.reqs[0].mw)
    ThrowArgument(env, "send", "an exchange is for connected QPs, without windows to bind");
  s->recv.Unpack(env, info[3], Napi::Number::New(env, 1));
  s->sendTag = wr.wr_id;
  s->recvTag = s->recv.wrs[0].wr_id;
  if (s->sendTag == s->recvTag) ThrowArgument(env, "wrId", "the send and the receive need different wrIds");
  s->timeoutTicks = s->clock.TicksIn(static_cast<int64_t>(ReadU32(info[4], "timeoutMs")) * 1000000);
  s->signalEvery = ReadU32(info[5], "signalEvery", 65536);
  if (s->signalEvery == 0) ThrowArgument(env, "signalEvery", "must be at least 1");
  CheckUsable(env, *s);

  Napi::ArrayBuffer ab;
  s->memory.Create(env, sizeof(ExchangeBlock), &ab);
  auto *block = new (s->memory.Data(env, "ibv_post_send")) ExchangeBlock();
  block->immData = ntohl(wr.imm_data);
  Napi::Object out = Napi::Object::New(env);
  out.Set("memory", ab);
  out.Set("call", BindCall(env, "exchange", &ExchangeCall, std::move(s)));
  return out;
}

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("createExchange", Napi::Function::New(env, CreateExchange, "createExchange"));
  Napi::Object layout = Napi::Object::New(env);
  layout.Set("wc", static_cast<double>(offsetof(ExchangeBlock, wc)));
  layout.Set("immData", static_cast<double>(offsetof(ExchangeBlock, immData)));
  layout.Set("postedAtUs", static_cast<double>(offsetof(ExchangeBlock, postedAtUs)));
  layout.Set("bytes", static_cast<double>(sizeof(ExchangeBlock)));
  layout.Set("notYet", static_cast<double>(kNotYet));
  exports.Set("exchangeLayout", layout);
}

[[maybe_unused]] const bool kRegistered = (Registrars().push_back(&Register), true);

}  // namespace

}  // namespace rdma_interop
