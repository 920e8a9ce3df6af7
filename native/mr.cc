// Memory region: ibv_reg_mr / ibv_dereg_mr, over a Node Buffer or over memory the addon
// allocates itself.
//
// A Buffer's memory belongs to its ArrayBuffer, which JS can detach (a transfer list,
// ArrayBuffer.prototype.transfer) and so free under a live registration; the TS layer
// marks it untransferable, which is all N-API allows. Memory the addon allocates is
// co-owned instead: the registration holds one reference, the external Buffer handed
// to JS another (dropped by its finalizer, which Node runs when the last ArrayBuffer
// over it goes, wherever it was transferred), and the pages are freed only when both
// are gone, so no JS operation can free them under the device.
//
// Where external buffers are refused or compiled out (js_memory.h), V8 allocates the
// memory instead (napi_create_arraybuffer, a page more than asked so that the part
// handed out starts on a page, as the external path's posix_memalign does) and the MR
// registers it where it is, exactly as it registers a user Buffer: the MR holds the
// view by a strong reference until deregistered (OnClosed, ~Mr: the deregistration comes
// first), so the garbage collector cannot free it under the device, and the TS layer
// marks the ArrayBuffer untransferable before JS sees it, refusing this path on a Node
// whose ArrayBuffer.prototype.transfer() ignores the mark (src/verbs/pd.ts). V8 never
// moves a backing store, so the registered address stays that of the memory.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "js_memory.h"
#include "mr_handle.h"
#include "resource.h"

namespace rdma_interop {

namespace {


constexpr size_t kMaxOwnedLength = size_t{1} << 40;

class Mr : public Resource<Mr, MrHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeMr", "mr", "memory region", "ibv_dereg_mr", ""};

  static Properties Methods() {
    return {
        InstanceAccessor<&Mr::Lkey>("lkey"),
        InstanceAccessor<&Mr::Rkey>("rkey"),
        InstanceAccessor<&Mr::Addr>("addr"),
        InstanceAccessor<&Mr::Length>("length"),
        InstanceAccessor<&Mr::BufferOf>("buffer"),
        InstanceAccessor<&Mr::MemoryOf>("memory"),
        InstanceMethod<&Mr::Rereg>("rereg"),
    };
  }

  // new NativeMr(pd, buffer | length, accessFlags[, offset, registeredLength]): a length
  // asks for addon-owned memory, of which [offset, offset + registeredLength) is
  // registered (all of it by default); the bytes around stay the caller's, unregistered.
  explicit Mr(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    PdPtr pd = PdFromJs(info[0], "ibv_reg_mr");
    uint32_t access = ReadU32(info[2], "access");
    MemoryPtr memory;
    Napi::Object view;  // what `buffer` returns: the Buffer given, or a view of the allocation
    uint8_t *base = nullptr;
    size_t offset = 0;
    size_t length = 0;
    if (info[1].IsNumber()) {
      size_t allocated = ReadU32(info[1], "length");
      if (allocated == 0) ThrowArgument(env, "length", "must be at least 1 byte");
      offset = info[3].IsUndefined() ? 0 : ReadU32(info[3], "range.offset");
      length = info[4].IsUndefined() ? allocated - std::min(offset, allocated)
                                     : ReadU32(info[4], "range.length");
      if (length == 0 || offset > allocated || length > allocated - offset)
        ThrowArgument(env, "range", "[" + std::to_string(offset) + ", " +
                                        std::to_string(offset + length) +
                                        ") is not a non-empty part of the " +
                                        std::to_string(allocated) + " bytes allocated");
      Napi::ArrayBuffer ab;
      size_t start = 0;
#ifndef NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED
      if (MemoryPathOf(env).path == MemoryPath::kExternal) {
        memory = Allocate(env, allocated);
        if (!NewExternalArrayBuffer(env, memory->data, memory->length, new MemoryPtr(memory), &ab))
          memory.reset();  // refused: V8-allocated below
      }
#endif
      if (!memory) {
        size_t page = PageSize();
        void *data = nullptr;
        ab = NewV8ArrayBuffer(env, allocated + page - 1, &data);
        start = (page - reinterpret_cast<uintptr_t>(data) % page) % page;
      }
      view = Napi::Uint8Array::New(env, allocated, ab, start);
      base = static_cast<uint8_t *>(ab.Data()) + start;
      v8Allocated_ = !memory;
    } else if (info[1].IsBuffer()) {
      auto buf = info[1].As<Napi::Buffer<uint8_t>>();
      view = buf;
      base = buf.Data();
      length = buf.Length();
    } else {
      ThrowArgument(env, "memory", "ibv_reg_mr: expected a Buffer or a length");
    }
    void *addr = base + offset;
    ibv_mr *mr = ibv_reg_mr(pd->pd, addr, length, static_cast<int>(access));
    if (mr == nullptr) ThrowVerbs(env, "ibv_reg_mr", pd->device, errno != 0 ? errno : ENOMEM);
    auto h = std::make_shared<MrHandle>();
    h->mr = mr;
    h->pd = pd;
    h->memory = memory;
    memory_ = static_cast<bool>(memory);
    h->device = pd->device;
    pd->mrs[mr->lkey] = {reinterpret_cast<uintptr_t>(mr->addr), mr->length};
    pd->children.Add(h);
    Attach(h);
    buffer_ = Napi::Persistent(view);
    lkey_ = mr->lkey;
    rkey_ = mr->rkey;
    addr_ = reinterpret_cast<uintptr_t>(mr->addr);
    length_ = mr->length;
  }

 public:
  // Only now may the Buffer go: the device can no longer reach it. (Addon-owned
  // memory then lives as long as the JS Buffer over it.)
  void OnClosed() { buffer_.Reset(); }

  // A finalized MR deregisters before its Buffer may go (handle_ is the base's member,
  // which would otherwise outlive buffer_).
  ~Mr() { handle_.reset(); }

 private:
  static size_t PageSize() {
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<size_t>(page) : 4096;
  }

  static MemoryPtr Allocate(Napi::Env env, size_t length) {
    if (length == 0 || length > kMaxOwnedLength)
      ThrowArgument(env, "length", "must be at least 1 byte");
    auto memory = std::make_shared<OwnedMemory>();
    if (posix_memalign(&memory->data, PageSize(), length) != 0)
      ThrowVerbs(env, "posix_memalign", "", ENOMEM);
    std::memset(memory->data, 0, length);
    memory->length = length;
    return memory;
  }

  // rereg(flags, pd, buffer, access) -> { lkey, rkey, addr, length }: ibv_rereg_mr
  // (mr_rereg.cc). A new translation's Buffer is held from now on, the old memory let go.
  Napi::Value Rereg(const Napi::CallbackInfo &info) {
    Napi::Object view;
    Napi::Object out = RereqMr(info, Handle("ibv_rereg_mr"), &view);
    if (!view.IsEmpty()) {
      buffer_ = Napi::Persistent(view);
      memory_ = false;
      v8Allocated_ = false;
    }
    lkey_ = out.Get("lkey").As<Napi::Number>().Uint32Value();
    rkey_ = out.Get("rkey").As<Napi::Number>().Uint32Value();
    addr_ = reinterpret_cast<uintptr_t>(handle_->mr->addr);
    length_ = handle_->mr->length;
    return out;
  }

  // 'user' (regMr's Buffer), 'external' or 'v8' (allocMr: js_memory.h's paths).
  Napi::Value MemoryOf(const Napi::CallbackInfo &info) {
    const char *kind = memory_ ? "external" : v8Allocated_ ? "v8" : "user";
    return Napi::String::New(info.Env(), kind);
  }

  // The memory the registration lies in: the Buffer given, or a Uint8Array over the
  // whole allocation (the TS layer makes it a Buffer).
  Napi::Value BufferOf(const Napi::CallbackInfo &info) {
    if (buffer_.IsEmpty()) return info.Env().Undefined();
    return buffer_.Value();
  }

  Napi::Value Lkey(const Napi::CallbackInfo &info) { return Napi::Number::New(info.Env(), lkey_); }
  Napi::Value Rkey(const Napi::CallbackInfo &info) { return Napi::Number::New(info.Env(), rkey_); }
  Napi::Value Addr(const Napi::CallbackInfo &info) { return U64(info.Env(), addr_); }
  Napi::Value Length(const Napi::CallbackInfo &info) {
    return Napi::Number::New(info.Env(), static_cast<double>(length_));
  }

  Napi::Reference<Napi::Object> buffer_;
  bool memory_ = false;       // the addon's own memory (external path)
  bool v8Allocated_ = false;  // V8's memory allocated for allocMr
  uint32_t lkey_ = 0, rkey_ = 0;
  uint64_t addr_ = 0;
  size_t length_ = 0;
};

}  // namespace

MrRef MrRefFromJs(const Napi::Value &v, const char *call) {
  auto h = Mr::FromJs(v, call);
  return MrRef{h, h->mr};
}

}  // namespace rdma_interop
