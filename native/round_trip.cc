// Round trips: one send request prepared once, posted and awaited by a single native
// call (issue 13). Under TCG one N-API transition costs about 6.5 us and ib_atomic_lat
// about 18-35 us, so the loop "post, wait for the completion, read the result" can afford
// one transition per iteration: `run` posts the stored ibv_send_wr, busy-polls the CQ for
// a bounded time, and writes the awaited completion into memory the addon owns, which JS
// reads through typed-array views (no objects, no bigint conversion per call). The fields
// that change between posts (add/compare, swap, remote address, immediate) are written by
// JS into that same memory and copied into the request at post time; nothing JS can write
// there can make the provider touch memory outside a registered MR.
//
// Safety, checked on every run: the QP and the CQs are live (EBADF otherwise), every SGE
// lies inside a live MR of the QP's PD (EBADF once its MR was closed: the lkey could be
// reused), the round trip was not released. Completions polled that are not this round
// trip's own go to the CQ's stash, which NativeCq.poll returns first: nothing is lost on a
// CQ shared with other QPs or other round trips.
#include "round_trip.h"
#include "work_request.h"
#include "wc_words.h"

namespace rdma_interop {

namespace {

enum class Kind { kAwaited, kOwnSend, kForeign };

Kind Classify(const RoundTripState &s, const ibv_wc &wc) {
  bool own = wc.qp_num == s.qp.qp->qp_num && wc.wr_id == s.wr.wr_id;
  if (!s.waitRecv) return own ? Kind::kAwaited : Kind::kForeign;
  // A receive on the awaited QP (an error completion carries no valid opcode: any
  // failed completion of that QP that is not our own send ends the wait too).
  if (wc.qp_num == s.waitQpNum && !own &&
      ((wc.opcode & IBV_WC_RECV) != 0 || wc.status != IBV_WC_SUCCESS))
    return Kind::kAwaited;
  if (own) return Kind::kOwnSend;
  return Kind::kForeign;
}

// Takes the first awaited completion out of the CQ's stash, dropping own sends met on the
// way; true if one was found.
bool FromStash(RoundTripState &s, CqHandle &cq, ibv_wc &out, bool *ownFailed) {
  for (auto it = cq.stash.begin(); it != cq.stash.end();) {
    Kind k = Classify(s, *it);
    if (k == Kind::kForeign) {
      ++it;
      continue;
    }
    ibv_wc wc = *it;
    it = cq.stash.erase(it);
    if (k == Kind::kAwaited || wc.status != IBV_WC_SUCCESS) {
      *ownFailed = k == Kind::kOwnSend;
      out = wc;
      return true;
    }
  }
  return false;
}

// One ibv_poll_cq pass; own successful sends are dropped, foreign completions stashed.
// Returns 1 with `out` set when the awaited (or a failed own) completion came, 0 if not,
// or a negative provider error.
int PollOnce(RoundTripState &s, CqHandle &cq, ibv_wc &out, bool *ownFailed) {
  ibv_wc wcs[8];
  int n = ibv_poll_cq(cq.cq, 8, wcs);
  if (n <= 0) return n;
  int found = 0;
  for (int i = 0; i < n; i++) {
    Kind k = found != 0 ? Kind::kForeign : Classify(s, wcs[i]);
    if (k == Kind::kForeign) {
      cq.stash.push_back(wcs[i]);
    } else if (k == Kind::kAwaited || wcs[i].status != IBV_WC_SUCCESS) {
      *ownFailed = k == Kind::kOwnSend;
      out = wcs[i];
      found = 1;
    }
  }
  return found;
}

uint32_t Run(Napi::Env env, RoundTripState &s) {
  CheckRunnable(env, s);
  BlockScope scope(env, s);
  if (s.staleSignaled != 0) CollectStale(env, s);
  if (!s.awaiting) {
    ApplyBlock(env, s);
    bool signaled = !s.waitRecv || ++s.unsignaled >= s.signalEvery;
    if (signaled) {
      s.wr.send_flags |= IBV_SEND_SIGNALED;
      s.unsignaled = 0;
    } else {
      s.wr.send_flags &= ~static_cast<unsigned>(IBV_SEND_SIGNALED);
    }
    ibv_send_wr *badWr = nullptr;
    s.block->postedAtUs = s.clock.Microseconds(s.clock.Ticks());
    int ret = ibv_post_send(s.qp.qp, &s.wr, &badWr);
    if (ret != 0) {
      if (!signaled) s.unsignaled--;
      ThrowVerbs(env, "ibv_post_send", s.qp.device, ret > 0 ? ret : -ret, "work request #0 refused", 0);
    }
    s.awaiting = true;
  }
  s.running = true;
  ClearOnExit unmark{s.running};
  ibv_wc wc{};
  bool ownFailed = false;
  CqHandle &cq = *s.waitCq;
  bool found = FromStash(s, cq, wc, &ownFailed);
  int64_t deadline = 0;
  for (uint32_t spins = 0; !found; ++spins) {
    int r = PollOnce(s, cq, wc, &ownFailed);
    if (r < 0) ThrowVerbs(env, "ibv_poll_cq", s.qp.device, r == -1 ? EIO : -r);
    if (r > 0) break;
    if ((spins & 63) == 63) {
      int64_t now = s.clock.Ticks();
      if (deadline == 0) deadline = now + s.timeoutTicks;
      else if (now >= deadline)
        ThrowVerbs(env, "ibv_poll_cq", s.qp.device, ETIMEDOUT,
                   "no completion within the round trip's timeout (still awaited: the next run "
                   "waits for it before posting)");
    }
  }
  // A failed own send (waiting for a receive) ends the wait: the QP is in error.
  (void)ownFailed;
  s.awaiting = false;
  WriteWcWords(s.block->wc, wc);
  // Own signaled sends on a separate send CQ: collect what is already there (never wait).
  if (s.waitRecv && s.qp.sendCq != s.waitCq && s.qp.sendCq->cq != nullptr) {
    ibv_wc ws[8];
    int n = ibv_poll_cq(s.qp.sendCq->cq, 8, ws);
    for (int i = 0; i < n; i++) {
      bool own = ws[i].qp_num == s.qp.qp->qp_num && ws[i].wr_id == s.wr.wr_id &&
                 ws[i].status == IBV_WC_SUCCESS;
      if (!own) s.qp.sendCq->stash.push_back(ws[i]);
    }
  }
  return wc.status;
}

// run() -> the awaited completion's status (0: success); its fields are in the block.
// Raw N-API (no node-addon-api CallbackInfo): this is the one transition of the loop.
napi_value RunCallback(napi_env env, napi_callback_info info) {
  void *data = nullptr;
  size_t argc = 0;
  if (napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data) != napi_ok) return nullptr;
  try {
    uint32_t status = Run(Napi::Env(env), **static_cast<RoundTripStatePtr *>(data));
    napi_value out = nullptr;
    napi_create_uint32(env, status, &out);
    return out;
  } catch (const Napi::Error &e) {
    ThrowIntoJs(e);
    return nullptr;
  }
}

// Binds a function to the state: the function's finalizer drops its reference, so the
// state lives as long as anything that can call into it.
Napi::Function Bind(Napi::Env env, const char *name, napi_callback cb, const RoundTripStatePtr &state) {
  auto *ref = new RoundTripStatePtr(state);
  napi_value fn = nullptr;
  if (napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, ref, &fn) != napi_ok) {
    delete ref;
    throw Napi::Error::New(env, "napi_create_function failed");
  }
  napi_add_finalizer(
      env, fn, ref, [](napi_env, void *p, void *) { delete static_cast<RoundTripStatePtr *>(p); }, nullptr,
      nullptr);
  return Napi::Function(env, fn);
}

napi_value ReleaseCallback(napi_env env, napi_callback_info info) {
  void *data = nullptr;
  size_t argc = 0;
  if (napi_get_cb_info(env, info, &argc, nullptr, nullptr, &data) != napi_ok) return nullptr;
  RoundTripState &s = **static_cast<RoundTripStatePtr *>(data);
  s.released = true;
  return nullptr;
}

// createRoundTrip(qp, wr, waitCq, waitQpNum, timeoutMs, signalEvery)
//   words: the request packed as send_word (common.h), naming no handle (no UD, no window)
//   waitQpNum: -1 to wait for the request's own completion, else a receive on that QP
// -> { run(): number, release(): void, block: ArrayBuffer } (block: js_memory.h's path)
Napi::Value CreateRoundTrip(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  auto s = std::make_shared<RoundTripState>();
  s->qp = QpRefFromJs(info[0], "ibv_post_send");
  // The request packed as every send request is (send_word, common.h): one of them, no handles.
  auto words = WordsArgument(env, info[1], "createRoundTrip");
  if (words.ElementLength() > send_word::kHandle && words.Data()[send_word::kHandle] != 0)
    ThrowVerbs(env, "ibv_post_send", s->qp.device, EOPNOTSUPP,
               "a round trip posts RC send, RDMA and atomic opcodes only (no UD destination)", 0);
  SendList list;
  list.Parse(env, words.Data(), words.ElementLength(), 1, env.Undefined());
  const SendRequest &p = list.reqs[0];
  s->waitCq = CqFromJs(info[2], "ibv_poll_cq");
  if (!info[3].IsNumber()) ThrowArgument(env, "waitQpNum", "must be a number");
  double waitQp = info[3].As<Napi::Number>().DoubleValue();
  s->waitRecv = waitQp >= 0;
  s->waitQpNum = s->waitRecv ? ReadU32(info[3], "waitQpNum", 0xffffff) : 0;
  s->timeoutTicks = s->clock.TicksIn(static_cast<int64_t>(ReadU32(info[4], "timeoutMs")) * 1000000);
  s->signalEvery = ReadU32(info[5], "signalEvery", 65536);
  if (s->signalEvery == 0) ThrowArgument(env, "signalEvery", "must be at least 1");

  switch (p.opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD: break;
    default:
      ThrowVerbs(env, "ibv_post_send", s->qp.device, EOPNOTSUPP,
                 "a round trip posts RC send, RDMA and atomic opcodes only", 0);
  }
  // Checked now too, so a wrong SGE is refused at prepare time, not at the first run.
  size_t bad = 0;
  if (!InlineSgesRegistered(*s->qp.pd, p.sges, &bad))
    ThrowVerbs(env, "ibv_post_send", s->qp.device, EINVAL,
               "sgList[" + std::to_string(bad) + "] is not inside a live MR of the QP's PD", 0);
  // Back end 1's fill of the one request, kept on the state's own SGE list.
  list.BuildChain();
  s->sges = p.sges;
  ibv_send_wr &wr = s->wr;
  wr = list.wrs[0];
  wr.sg_list = s->sges.empty() ? nullptr : s->sges.data();
  wr.next = nullptr;

  Napi::ArrayBuffer ab;
  s->memory.Create(env, sizeof(RoundTripBlock), &ab);
  auto *block = new (s->memory.Data(env, "ibv_post_send")) RoundTripBlock();
  block->compareAdd = p.compareAdd;
  block->swap = p.swap;
  block->remoteAddr = p.remoteAddr;
  block->immData = p.imm;

  Napi::Object out = Napi::Object::New(env);
  out.Set("run", Bind(env, "run", RunCallback, s));
  out.Set("repeat", Bind(env, "repeat", RepeatCallback, s));
  out.Set("release", Bind(env, "release", ReleaseCallback, s));
  out.Set("block", ab);
  return out;
}

}  // namespace

void RegisterRoundTrip(Napi::Env env, Napi::Object exports) {
  exports.Set("createRoundTrip", Napi::Function::New(env, CreateRoundTrip, "createRoundTrip"));
  Napi::Object layout = Napi::Object::New(env);
  layout.Set("compareAdd", static_cast<double>(offsetof(RoundTripBlock, compareAdd)));
  layout.Set("swap", static_cast<double>(offsetof(RoundTripBlock, swap)));
  layout.Set("remoteAddr", static_cast<double>(offsetof(RoundTripBlock, remoteAddr)));
  layout.Set("immData", static_cast<double>(offsetof(RoundTripBlock, immData)));
  layout.Set("wc", static_cast<double>(offsetof(RoundTripBlock, wc)));
  layout.Set("postedAtUs", static_cast<double>(offsetof(RoundTripBlock, postedAtUs)));
  layout.Set("completedAtUs", static_cast<double>(offsetof(RoundTripBlock, completedAtUs)));
  layout.Set("bytes", static_cast<double>(sizeof(RoundTripBlock)));
  exports.Set("roundTripLayout", layout);
}

}  // namespace rdma_interop
