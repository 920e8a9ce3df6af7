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
#include <typeindex>
#include <vector>

namespace rdma_interop {

// ---------------------------------------------------------------- errors

enum class MemoryPath { kExternal, kV8 };

/// Which memory the addon shares with JS (js_memory.h), and why that one (exported with it:
/// src/verbs/memory-path.ts).
struct MemoryPathState {
  MemoryPath path = MemoryPath::kExternal;
  const char *reason = "default";
  /// False once external buffers are known to be unavailable (compiled out or refused).
  bool externalAvailable = true;
};

/// Per-environment state: the JS VerbsError constructor registered by the TS layer.
struct AddonData {
  Napi::FunctionReference verbsErrorCtor;
  /// The JS VerbsArgumentError constructor (field, message): wrong arguments.
  Napi::FunctionReference verbsArgumentErrorCtor;
  /// The constructor of each Resource class (resource.h), by its C++ type.
  std::map<std::type_index, Napi::FunctionReference> classes;
  /// How memory shared with JS is allocated (js_memory.h).
  MemoryPathState memoryPath;
  /// node:worker_threads' markAsUntransferable, given by the TS layer
  /// (setUntransferableMarker): called on every V8-allocated ArrayBuffer before JS sees it.
  Napi::FunctionReference markUntransferable;
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

/// Hands `e` to JavaScript from a raw napi_callback, where no node-addon-api wrapper
/// catches for us: a C++ exception leaving such a frame (or a libuv callback) unwinds into
/// V8 and ends the process in std::terminate. When the environment is ending
/// (worker.terminate(), process.exit() in a worker) N-API can no longer throw; the
/// error then has nobody to go to and is dropped. Never throws.
void ThrowIntoJs(const Napi::Error &e) noexcept;

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

// ---------------------------------------------------------------- packed send requests
// The one form of a send request the addon reads (postSend, boundPost, prepare, a round
// trip): u32 words the TS layer wrote (no property read through N-API per field), per
// request kCount header words at these indices, the 64-bit fields as native-endian u64 at
// even indices (a BigUint64Array over the same memory writes them), then kNumSge SGEs of
// sge_word::kCount words each. The objects a request names (a UD destination's AH, a
// BIND_MW's window and MR) travel beside the words in a JS array: kHandle is the index
// of the request's first one plus 1 (0: none), the AH alone or the MW then the MR. The
// addon exports the table (sendLayout); a host test checks SEND_LAYOUT in
// src/native/request-layout.ts against it.
namespace send_word {
enum : size_t {
  kWrId = 0,
  kRemoteAddr = 2,
  kCompareAdd = 4,
  kSwap = 6,
  kAtomicValue = 8,
  kFlushLength = 10,
  kOpcode = 12,
  kSendFlags,
  kNumSge,
  kImmData,  // host order; the addon applies htonl
  kRkey,
  kFlushType,
  kFlushLevel,
  kInvalidateRkey,  // LOCAL_INV / SEND_WITH_INV
  kBindAddr = 20,   // BIND_MW: ibv_mw_bind_info's addr, length, access and the new rkey
  kBindLength = 22,
  kBindAccess = 24,
  kBindRkey,
  kRemoteQpn,  // UD destination (with its AH among the handles)
  kRemoteQkey,
  kHandle,  // first handle's index + 1, 0: none
  kCount = 30,  // even: the next request's u64 fields stay 8-byte aligned
};
}  // namespace send_word
namespace sge_word {
enum : size_t { kAddr = 0, kLength = 2, kLkey = 3, kCount = 4 };
}  // namespace sge_word
// Receive requests packed the same way (NativeQp/NativeSrq.postRecv): per request
// its wrId and SGE count, then kNumSge SGEs of sge_word::kCount words each.
namespace recv_word {
enum : size_t { kWrId = 0, kNumSge = 2, kCount = 4 };
}  // namespace recv_word

// ---------------------------------------------------------------- handles
// Each handle owns one verbs resource and releases it in its destructor (the
// safety net used by finalizers); explicit close() runs the same release and
// reports its error. Children hold shared_ptrs to their parents' handles (a parent's
// memory outlives them), and parents list their children weakly (as pyverbs does) so
// that close() can release live children first. This includes children JS has
// forgotten but not yet finalized, so a cascading close never depends on the garbage
// collector's timing. The native classes over these handles are Resource<Self,
// Handle>s (resource.h).

/// The close order among the children of one parent: windows first (a type 2 window
/// holds a reference on the QP it was bound through, rxe_mw.c rxe_do_bind_mw, and rxe
/// refuses to deregister an MR with windows bound to it), a QP before its SRQ (which
/// refuses to go while a QP uses it), a QP before the AHs and MRs of its PD, PDs before
/// CQs (a QP before its CQs), the QP of a cm_id before the id. src/verbs/lifetime.ts
/// CLOSE_ORDER is the same list.
enum class Rank { kMw, kQp, kSrq, kAh, kMr, kPd, kCq, kCmId };

struct ResourceHandle;

/// A parent's children, held weakly, in close order: by Rank, then by creation.
class Children {
 public:
  /// Lists `child` (its type's kRank says where); forgets the expired ones.
  template <typename Handle>
  void Add(const std::shared_ptr<Handle> &child) {
    Entry entry{Handle::kRank, child};
    std::vector<Entry> kept;
    bool placed = false;
    for (auto &e : entries_) {
      if (e.child.expired()) continue;
      if (!placed && e.rank > entry.rank) {
        kept.push_back(entry);
        placed = true;
      }
      kept.push_back(e);
    }
    if (!placed) kept.push_back(entry);
    entries_.swap(kept);
  }
  /// Forgets `child` (one that moved to another parent: an MR that ibv_rereg_mr moved
  /// to another PD, mr_rereg.cc).
  void Remove(const ResourceHandle *child) {
    std::vector<Entry> kept;
    for (auto &e : entries_)
      if (auto c = e.child.lock(); c && c.get() != child) kept.push_back(e);
    entries_.swap(kept);
  }
  bool AnyLive() const;
  /// Releases every live child in order; the first error stops (the rest stays, as it was).
  int ReleaseAll() const;

 private:
  struct Entry {
    Rank rank;
    std::weak_ptr<ResourceHandle> child;
  };
  std::vector<Entry> entries_;
};

/// One verbs resource, its device's name and its children.
struct ResourceHandle {
  virtual ~ResourceHandle() = default;
  std::string device;  // for messages; kept after the resource is gone
  Children children;
  virtual bool Live() const = 0;
  /// Destroys this resource alone (its children are gone): 0 or a positive errno; on
  /// success Live() turns false.
  virtual int Destroy() = 0;
  /// A positive errno while the resource may not go at all, children included (a call
  /// running on another thread uses it); 0 otherwise.
  virtual int Pinned() const { return 0; }
  /// Releases the live children, then the resource; 0 or a positive errno. Idempotent.
  int Release() {
    if (!Live()) return 0;
    if (int ret = Pinned(); ret != 0) return ret;
    if (int ret = children.ReleaseAll(); ret != 0) return ret;
    return Destroy();
  }
};

inline bool Children::AnyLive() const {
  for (const auto &e : entries_)
    if (auto c = e.child.lock(); c && c->Live()) return true;
  return false;
}

inline int Children::ReleaseAll() const {
  for (const auto &e : entries_)
    if (auto c = e.child.lock(); c && c->Live())
      if (int ret = c->Release(); ret != 0) return ret;
  return 0;
}

struct ContextHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kPd;  // never a child; any rank
  ibv_context *ctx = nullptr;
  bool owned = true;  // false for the context librdmacm opened (never closed by us)
  bool Live() const override { return ctx != nullptr; }
  int Destroy() override {
    if (ctx != nullptr && owned && ibv_close_device(ctx) != 0) return errno != 0 ? errno : EIO;
    ctx = nullptr;
    return 0;
  }
  ~ContextHandle() override { Destroy(); }
};
using ContextPtr = std::shared_ptr<ContextHandle>;

struct PdHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kPd;
  ibv_pd *pd = nullptr;
  ContextPtr ctx;
  /// The live MRs of this PD by lkey: [addr, addr + length). An inline post makes the
  /// provider memcpy from the SGE's address in this process, with no key check: the
  /// addon allows it only inside one of these (see InlineSgesRegistered).
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> mrs;
  bool Live() const override { return pd != nullptr; }
  int Destroy() override {
    if (pd == nullptr) return 0;
    int ret = ibv_dealloc_pd(pd);
    if (ret == 0) pd = nullptr;
    return ret;
  }
  ~PdHandle() override { Destroy(); }
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

struct CqHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kCq;
  ibv_cq *cq = nullptr;
  /// Set when made by ibv_create_cq_ex (cq_ext.cc); `cq` is then ibv_cq_ex_to_cq(ex).
  ibv_cq_ex *ex = nullptr;
  uint64_t wcFlags = 0;  // the IBV_WC_EX_WITH_* flags it was made with
  CompChannelPtr channel;  // may be null
  ContextPtr ctx;
  unsigned unacked = 0;  // completion events read but not yet acknowledged
  /// Completions a round trip (round_trip.cc) polled that were not its own: poll()
  /// returns these first, so busy-polling a shared CQ never loses a completion.
  std::deque<ibv_wc> stash;
  bool Live() const override { return cq != nullptr; }
  int Destroy() override {
    if (cq == nullptr) return 0;
    if (unacked != 0) ibv_ack_cq_events(cq, unacked);
    unacked = 0;
    int ret = ibv_destroy_cq(cq);
    if (ret != 0) return ret;
    cq = nullptr;
    ex = nullptr;
    if (channel && channel->channel != nullptr) {
      ibv_destroy_comp_channel(channel->channel);
      channel->channel = nullptr;
    }
    return 0;
  }
  ~CqHandle() override { Destroy(); }
};
using CqPtr = std::shared_ptr<CqHandle>;

struct AhHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kAh;
  ibv_ah *ah = nullptr;
  PdPtr pd;
  bool Live() const override { return ah != nullptr; }
  int Destroy() override {
    if (ah == nullptr) return 0;
    int ret = ibv_destroy_ah(ah);
    if (ret == 0) ah = nullptr;
    return ret;
  }
  ~AhHandle() override { Destroy(); }
};
using AhPtr = std::shared_ptr<AhHandle>;

struct SrqHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kSrq;
  ibv_srq *srq = nullptr;
  PdPtr pd;
  bool Live() const override { return srq != nullptr; }
  int Destroy() override {
    if (srq == nullptr) return 0;
    int ret = ibv_destroy_srq(srq);
    if (ret == 0) srq = nullptr;
    return ret;
  }
  ~SrqHandle() override { Destroy(); }
};
using SrqPtr = std::shared_ptr<SrqHandle>;

struct MwHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kMw;
  ibv_mw *mw = nullptr;
  PdPtr pd;
  bool Live() const override { return mw != nullptr; }
  int Destroy() override {
    if (mw == nullptr) return 0;
    int ret = ibv_dealloc_mw(mw);
    if (ret == 0) mw = nullptr;
    return ret;
  }
  ~MwHandle() override { Destroy(); }
};
using MwPtr = std::shared_ptr<MwHandle>;

struct EventChannelHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kCmId;  // never a child; any rank
  rdma_event_channel *channel = nullptr;
  bool Live() const override { return channel != nullptr; }
  int Destroy() override {
    if (channel != nullptr) rdma_destroy_event_channel(channel);
    channel = nullptr;
    return 0;
  }
  ~EventChannelHandle() override { Destroy(); }
};
using EventChannelPtr = std::shared_ptr<EventChannelHandle>;

struct CmIdHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kCmId;
  rdma_cm_id *id = nullptr;
  EventChannelPtr channel;
  bool hasQp = false;
  /// rdma_disconnect calls running on the thread pool: the id must outlive them.
  unsigned disconnecting = 0;
  bool Live() const override { return id != nullptr; }
  int Pinned() const override { return disconnecting != 0 ? EBUSY : 0; }
  int Destroy() override {
    if (id == nullptr) return 0;
    if (hasQp) rdma_destroy_qp(id);
    hasQp = false;
    if (rdma_destroy_id(id) != 0) return errno != 0 ? errno : EIO;
    id = nullptr;
    return 0;
  }
  ~CmIdHandle() override { Destroy(); }
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
SrqPtr SrqFromJs(const Napi::Value &v, const char *call);
MwPtr MwFromJs(const Napi::Value &v, const char *call);
/// The live ibv_mr behind a JS NativeMr (a window's bind): `owner` keeps it registered.
struct MrRef {
  std::shared_ptr<ResourceHandle> owner;
  ibv_mr *mr = nullptr;
};
MrRef MrRefFromJs(const Napi::Value &v, const char *call);
/// Reads a JS address vector ({ dlid, sl, portNum, grh: { dgid, sgidIndex, ... } }).
void ReadAhAttr(const Napi::Object &ah, ibv_ah_attr &out);
/// What a round trip (round_trip.cc) needs of a QP: the handle (`owner->Live()` is
/// false once destroyed), the raw QP, its PD (the live MRs) and its CQs.
struct QpRef {
  std::shared_ptr<ResourceHandle> owner;
  ibv_qp *qp = nullptr;
  PdPtr pd;
  CqPtr sendCq, recvCq;
  std::string device;
};
QpRef QpRefFromJs(const Napi::Value &v, const char *call);
/// A new JS Context object around an existing handle (used for rdma_cm's context).
Napi::Object NewContextObject(Napi::Env env, const ContextPtr &ctx);
/// A new JS Qp object around a QP that rdma_create_qp_ex made on `id`; `sendOps` != 0:
/// created for the ibv_wr_* API with those IBV_QP_EX_WITH_* flags; `srq`: receives there.
Napi::Object NewCmQpObject(Napi::Env env, const CmIdPtr &id, const PdPtr &pd, const CqPtr &send,
                           const CqPtr &recv, uint64_t sendOps = 0, const SrqPtr &srq = nullptr);
/// A new JS CmId object around a cm_id delivered by a CONNECT_REQUEST event.
Napi::Object NewCmIdObject(Napi::Env env, const CmIdPtr &id);

// ---------------------------------------------------------------- registration

/// A function that defines part of the addon's exports for one environment.
using Registrar = void (*)(Napi::Env env, Napi::Object exports);
/// The Registrars of the native verbs classes, each added by its class when the addon
/// loads (resource.h); module.cc runs them all.
inline std::vector<Registrar> &Registrars() {
  static std::vector<Registrar> registrars;
  return registrars;
}

void RegisterErrors(Napi::Env env, Napi::Object exports);
void RegisterDevice(Napi::Env env, Napi::Object exports);
void RegisterFdWatcher(Napi::Env env, Napi::Object exports);
void RegisterConstants(Napi::Env env, Napi::Object exports);
void RegisterRoundTrip(Napi::Env env, Napi::Object exports);

}  // namespace rdma_interop
