// Memory the addon shares with JavaScript (issue 36), by one of two paths:
//
// - external: the addon allocates it and hands JS an external ArrayBuffer over it
//   (napi_create_external_arraybuffer), co-owned through a shared_ptr that the
//   ArrayBuffer's finalizer drops. The address never changes and no JS operation frees it.
// - V8-allocated: V8 allocates it (napi_create_arraybuffer, zero-filled) and the addon
//   holds the ArrayBuffer by a strong reference. Builds of Node with the V8 sandbox refuse
//   external buffers (napi_no_external_buffers_allowed), and an addon compiled with
//   NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED (node-addon-api's switch; node_api.h and
//   js_native_api.h then do not even declare the external calls) has only this path.
//   V8 never moves a backing store, but JS can detach the ArrayBuffer
//   (ArrayBuffer.prototype.transfer(), a transfer list) and the new owner may free it: so
//   the addon looks the address up from its reference at every call that uses it (a
//   detached ArrayBuffer is VerbsError EBADF, never a dangling pointer). Memory a device
//   reaches on its own (allocMr's, mr.cc) cannot be looked up at each access: there the
//   TS layer marks the ArrayBuffer untransferable and refuses the path on a Node whose
//   ArrayBuffer.prototype.transfer() ignores the mark (src/verbs/pd.ts).
//
// Which path new memory takes is per environment (MemoryPathOf): V8-allocated when the
// addon was compiled without external buffers, when this Node refused one (probed at load
// and at every creation), or when RDMA_INTEROP_NO_EXTERNAL_BUFFERS=1 asked for it at load
// or setMemoryPath('v8') later (tests, the bench); external otherwise.
#pragma once

#include "common.h"

namespace rdma_interop {

/// The environment's memory path (kept in AddonData).
MemoryPathState &MemoryPathOf(Napi::Env env);

/// Decides the path when the addon loads (the probe, the compile-time switch, the env var).
void InitMemoryPath(Napi::Env env);

/// memoryPath() -> { path, reason, externalAvailable }, setMemoryPath(path) and
/// setUntransferableMarker(fn) on `exports`.
void RegisterMemoryPath(Napi::Env env, Napi::Object exports);

/// `bytes` zeroed bytes shared with JS, 8-byte aligned (what the blocks' fields need).
class SharedBlock {
 public:
  SharedBlock() = default;
  SharedBlock(const SharedBlock &) = delete;
  SharedBlock &operator=(const SharedBlock &) = delete;
  ~SharedBlock() { Release(); }

  /// Allocates by the environment's path; `*out` is the ArrayBuffer JS gets.
  void Create(Napi::Env env, size_t bytes, Napi::ArrayBuffer *out);

  /// The address for this call: fixed on the external path; on the V8 path looked up
  /// from the ArrayBuffer (VerbsError EBADF from `call` once JS detached it). Valid until
  /// JS runs again, so only for the duration of one native call.
  void *Data(napi_env env, const char *call) const;

  size_t Bytes() const { return bytes_; }
  MemoryPath Path() const { return ref_ != nullptr ? MemoryPath::kV8 : MemoryPath::kExternal; }

  /// Drops the V8 path's reference (the ArrayBuffer may then be collected); idempotent.
  void Release();

 private:
  std::shared_ptr<std::vector<uint64_t>> owned_;  // external path
  napi_env env_ = nullptr;                        // V8 path: where ref_ lives
  napi_ref ref_ = nullptr;
  size_t bytes_ = 0;
};

/// A V8-allocated ArrayBuffer of `bytes` zeroed bytes (napi_create_arraybuffer), marked
/// untransferable when the TS layer gave the marker (a transfer list then copies it or
/// throws DataCloneError instead of detaching it).
Napi::ArrayBuffer NewV8ArrayBuffer(Napi::Env env, size_t bytes, void **data);

#ifndef NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
/// An external ArrayBuffer over `data`; its finalizer deletes `owner` (a heap copy of a
/// shared_ptr). Returns false, with `owner` deleted and the environment's path switched to
/// V8-allocated, when this Node refuses external buffers (napi_no_external_buffers_allowed).
template <typename Owner>
bool NewExternalArrayBuffer(Napi::Env env, void *data, size_t bytes, Owner *owner, Napi::ArrayBuffer *out) {
  napi_value ab = nullptr;
  napi_status st = napi_create_external_arraybuffer(
      env, data, bytes, [](napi_env, void *, void *hint) { delete static_cast<Owner *>(hint); }, owner,
      &ab);
  if (st == napi_no_external_buffers_allowed) {
    delete owner;
    MemoryPathState &state = MemoryPathOf(env);
    state = {MemoryPath::kV8, "refused", false};
    return false;
  }
  if (st != napi_ok) {
    delete owner;
    throw Napi::Error::New(env, "napi_create_external_arraybuffer failed");
  }
  *out = Napi::ArrayBuffer(env, ab);
  return true;
}
#endif

}  // namespace rdma_interop
