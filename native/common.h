// Shared plumbing of the rdma_interop addon: the owned-handle types (one per verbs
// object, RAII, shared by children so a parent outlives them whatever order the
// garbage collector finalises things in), the VerbsError helpers that normalise
// libibverbs' three return conventions, and small argument readers.
#pragma once

#include <napi.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rdma_interop {

// ---------------------------------------------------------------- errors

/// Per-environment state: the JS VerbsError constructor registered by the TS layer.
struct AddonData {
  Napi::FunctionReference verbsErrorCtor;
  /// The JS VerbsArgumentError constructor (field, message): wrong arguments.
  Napi::FunctionReference verbsArgumentErrorCtor;
  Napi::FunctionReference contextCtor;
  Napi::FunctionReference pdCtor;
  Napi::FunctionReference cqCtor;
  Napi::FunctionReference qpCtor;
  Napi::FunctionReference cmIdCtor;
  Napi::FunctionReference eventChannelCtor;
  Napi::FunctionReference ahCtor;
};

/// The symbolic name of an errno value ("EINVAL"), or "E<n>" when unknown.
const char *ErrnoName(int err);

/// Throws a VerbsError for `err` (a positive errno value) raised by `call`; for a post
/// call, `badWrIndex` (>= 0) is the index of the refused request in the list given.
[[noreturn]] void ThrowVerbs(Napi::Env env, const char *call, const std::string &device, int err,
                             const std::string &detail = std::string(), int badWrIndex = -1);

/// Throws a VerbsArgumentError (src/verbs/errors.ts) for a wrong argument: `field` names
/// it as the caller wrote it ('sgList[1]', 'access'), `message` says what is wrong. Every
/// argument check of the addon throws this, so a wrong call is a typed error, not a
/// plain TypeError or RangeError.
[[noreturn]] void ThrowArgument(Napi::Env env, const std::string &field, const std::string &message);

/// libibverbs calls return 0, a positive errno (the documented convention), or a
/// NEGATIVE errno (libsiw's ibv_post_send returns -EINVAL): both are accepted here.
inline void CheckIbv(Napi::Env env, const char *call, const std::string &device, int ret) {
  if (ret == 0) return;
  ThrowVerbs(env, call, device, ret > 0 ? ret : -ret);
}

/// librdmacm and a few libibverbs calls return -1 and set errno.
inline void CheckErrno(Napi::Env env, const char *call, const std::string &device, int ret) {
  if (ret == 0) return;
  int err = errno;
  ThrowVerbs(env, call, device, err != 0 ? err : EIO);
}

/// Calls on an object that was closed get EBADF rather than a crash.
[[noreturn]] inline void ThrowClosed(Napi::Env env, const char *call, const std::string &device,
                                     const char *what) {
  ThrowVerbs(env, call, device, EBADF, std::string(what) + " is closed");
}

// ---------------------------------------------------------------- completion layout
// NativeCq.poll writes each ibv_wc as kWcWords u32 words at these indices; the addon
// exports the table (wcLayout) and a host test checks WC_LAYOUT in bindings.ts against it.
namespace wc_word {
enum : size_t {
  kWrIdLow,
  kWrIdHigh,
  kStatus,
  kOpcode,
  kVendorErr,
  kByteLen,
  kImmDataRaw,  // network-order bytes read as a host u32
  kQpNum,
  kSrcQp,
  kWcFlags,
  kPkeyIndex,
  kSlid,
  kSl,
  kDlidPathBits,
  kCount,
};
}  // namespace wc_word

// ---------------------------------------------------------------- handles
// Each handle owns one verbs resource and releases it in its destructor (the
// safety net used by finalizers); explicit close() runs the same release and
// reports its error. Children hold shared_ptrs to their parents' handles (a parent's
// memory outlives them), and parents list their children weakly (as pyverbs does) so
// that close() can release live children first, in order: context -> PDs (their QPs,
// AHs, MRs) -> CQs. This includes children JS has forgotten but not yet finalized, so
// a cascading close never depends on the garbage collector's timing.

/// A verbs resource a parent can release before its own.
struct Releasable {
  virtual ~Releasable() = default;
  /// Destroys the resource (its own children first); 0 or a positive errno. Idempotent.
  virtual int Release() = 0;
  virtual bool Live() const = 0;
};
using Children = std::vector<std::weak_ptr<Releasable>>;

inline void AddChild(Children &children, const std::shared_ptr<Releasable> &child) {
  Children kept;
  for (auto &w : children)
    if (!w.expired()) kept.push_back(w);
  kept.push_back(child);
  children.swap(kept);
}

inline bool AnyLive(const Children &children) {
  for (const auto &w : children)
    if (auto c = w.lock(); c && c->Live()) return true;
  return false;
}

/// Releases every live child; the first error stops (the rest stays, as it was).
inline int ReleaseAll(const Children &children) {
  for (const auto &w : children)
    if (auto c = w.lock(); c && c->Live()) {
      int ret = c->Release();
      if (ret != 0) return ret;
    }
  return 0;
}

struct ContextHandle {
  ibv_context *ctx = nullptr;
  bool owned = true;  // false for the context librdmacm opened (never closed by us)
  std::string name;
  Children pds, cqs;
  ~ContextHandle() {
    if (ctx != nullptr && owned) ibv_close_device(ctx);
  }
};
using ContextPtr = std::shared_ptr<ContextHandle>;

struct PdHandle : Releasable {
  ibv_pd *pd = nullptr;
  ContextPtr ctx;
  Children qps, ahs, mrChildren;
  int Release() override {
    if (pd == nullptr) return 0;
    for (const Children *c : {&qps, &ahs, &mrChildren})
      if (int ret = ReleaseAll(*c); ret != 0) return ret;
    int ret = ibv_dealloc_pd(pd);
    if (ret == 0) pd = nullptr;
    return ret;
  }
  bool Live() const override { return pd != nullptr; }
  bool HasLiveChildren() const { return AnyLive(qps) || AnyLive(ahs) || AnyLive(mrChildren); }
  /// The live MRs of this PD by lkey: [addr, addr + length). An inline post makes the
  /// provider memcpy from the SGE's address in this process, with no key check: the
  /// addon allows it only inside one of these (see InlineSgesRegistered).
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> mrs;
  ~PdHandle() {
    if (pd != nullptr) ibv_dealloc_pd(pd);
  }
};
using PdPtr = std::shared_ptr<PdHandle>;

struct CompChannelHandle {
  ibv_comp_channel *channel = nullptr;
  ContextPtr ctx;
  ~CompChannelHandle() {
    if (channel != nullptr) ibv_destroy_comp_channel(channel);
  }
};
using CompChannelPtr = std::shared_ptr<CompChannelHandle>;

struct CqHandle : Releasable {
  ibv_cq *cq = nullptr;
  CompChannelPtr channel;  // may be null
  ContextPtr ctx;
  unsigned unacked = 0;  // completion events read but not yet acknowledged
  /// Completions a round trip (round_trip.cc) polled that were not its own: poll()
  /// returns these first, so busy-polling a shared CQ never loses a completion.
  std::deque<ibv_wc> stash;
  Children qps;          // the QPs using it (released first: a QP before its CQs)
  int Release() override {
    if (cq == nullptr) return 0;
    if (int ret = ReleaseAll(qps); ret != 0) return ret;
    if (unacked != 0) ibv_ack_cq_events(cq, unacked);
    unacked = 0;
    int ret = ibv_destroy_cq(cq);
    if (ret != 0) return ret;
    cq = nullptr;
    if (channel && channel->channel != nullptr) {
      ibv_destroy_comp_channel(channel->channel);
      channel->channel = nullptr;
    }
    return 0;
  }
  bool Live() const override { return cq != nullptr; }
  ~CqHandle() {
    if (cq != nullptr) {
      if (unacked != 0) ibv_ack_cq_events(cq, unacked);
      ibv_destroy_cq(cq);
    }
  }
};
using CqPtr = std::shared_ptr<CqHandle>;

struct AhHandle : Releasable {
  ibv_ah *ah = nullptr;
  PdPtr pd;
  int Release() override {
    if (ah == nullptr) return 0;
    int ret = ibv_destroy_ah(ah);
    if (ret == 0) ah = nullptr;
    return ret;
  }
  bool Live() const override { return ah != nullptr; }
  ~AhHandle() {
    if (ah != nullptr) ibv_destroy_ah(ah);
  }
};
using AhPtr = std::shared_ptr<AhHandle>;

struct EventChannelHandle {
  rdma_event_channel *channel = nullptr;
  ~EventChannelHandle() {
    if (channel != nullptr) rdma_destroy_event_channel(channel);
  }
};
using EventChannelPtr = std::shared_ptr<EventChannelHandle>;

struct CmIdHandle {
  rdma_cm_id *id = nullptr;
  EventChannelPtr channel;
  bool hasQp = false;
  ~CmIdHandle() {
    if (id != nullptr) {
      if (hasQp) rdma_destroy_qp(id);
      rdma_destroy_id(id);
    }
  }
};
using CmIdPtr = std::shared_ptr<CmIdHandle>;

/// True when every SGE lies inside a live MR of `pd` whose lkey it names. Used for
/// inline sends only (the device checks keys itself for the others).
inline bool InlineSgesRegistered(const PdHandle &pd, const std::vector<ibv_sge> &sges,
                                 size_t *badIndex) {
  for (size_t i = 0; i < sges.size(); i++) {
    const ibv_sge &s = sges[i];
    auto it = pd.mrs.find(s.lkey);
    bool inside = it != pd.mrs.end() && s.addr >= it->second.first &&
                  s.length <= it->second.second &&
                  s.addr - it->second.first <= it->second.second - s.length;
    if (!inside) {
      *badIndex = i;
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------- arguments

/// Reads a bigint argument as uint64 (VerbsArgumentError unless a bigint that fits losslessly).
uint64_t ReadU64(const Napi::Value &v, const char *what);
/// Reads a number that must be an integer in [0, max] (VerbsArgumentError otherwise).
uint32_t ReadU32(const Napi::Value &v, const char *what, uint64_t max = 0xffffffffULL);
/// Reads an optional property (undefined -> fallback).
uint32_t ReadU32Prop(const Napi::Object &o, const char *key, uint32_t fallback,
                     uint64_t max = 0xffffffffULL);
uint64_t ReadU64Prop(const Napi::Object &o, const char *key, uint64_t fallback);
bool ReadBoolProp(const Napi::Object &o, const char *key, bool fallback);

/// A uint64 as a JS bigint.
inline Napi::Value U64(Napi::Env env, uint64_t v) { return Napi::BigInt::New(env, v); }

// ---------------------------------------------------------------- cross-object access
// Each returns the live handle behind a wrapped JS object, throwing VerbsArgumentError for
// a wrong type and a VerbsError EBADF for a closed object.

ContextPtr ContextFromJs(const Napi::Value &v, const char *call);
PdPtr PdFromJs(const Napi::Value &v, const char *call);
CqPtr CqFromJs(const Napi::Value &v, const char *call);
CmIdPtr CmIdFromJs(const Napi::Value &v, const char *call);
AhPtr AhFromJs(const Napi::Value &v, const char *call);
/// Reads a JS address vector ({ dlid, sl, portNum, grh: { dgid, sgidIndex, ... } }).
void ReadAhAttr(const Napi::Object &ah, ibv_ah_attr &out);
/// What a round trip (round_trip.cc) needs of a QP: the handle (`owner->Live()` is
/// false once destroyed), the raw QP, its PD (the live MRs) and its CQs.
struct QpRef {
  std::shared_ptr<Releasable> owner;
  ibv_qp *qp = nullptr;
  PdPtr pd;
  CqPtr sendCq, recvCq;
  std::string device;
};
QpRef QpRefFromJs(const Napi::Value &v, const char *call);
/// A new JS Context object around an existing handle (used for rdma_cm's context).
Napi::Object NewContextObject(Napi::Env env, const ContextPtr &ctx);
/// A new JS Qp object around a QP that rdma_create_qp made on `id`.
Napi::Object NewCmQpObject(Napi::Env env, const CmIdPtr &id, const PdPtr &pd, const CqPtr &send,
                           const CqPtr &recv);
/// A new JS CmId object around a cm_id delivered by a CONNECT_REQUEST event.
Napi::Object NewCmIdObject(Napi::Env env, const CmIdPtr &id);

// ---------------------------------------------------------------- registration

void RegisterErrors(Napi::Env env, Napi::Object exports);
void RegisterDevice(Napi::Env env, Napi::Object exports);
void RegisterPd(Napi::Env env, Napi::Object exports);
void RegisterMr(Napi::Env env, Napi::Object exports);
void RegisterCq(Napi::Env env, Napi::Object exports);
void RegisterQp(Napi::Env env, Napi::Object exports);
void RegisterFdWatcher(Napi::Env env, Napi::Object exports);
void RegisterCm(Napi::Env env, Napi::Object exports);
void RegisterAh(Napi::Env env, Napi::Object exports);
void RegisterConstants(Napi::Env env, Napi::Object exports);
void RegisterRoundTrip(Napi::Env env, Napi::Object exports);

}  // namespace rdma_interop
