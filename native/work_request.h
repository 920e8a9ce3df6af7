// Work requests, apart from the queues they are posted on (as pyverbs keeps wr.pyx apart
// from qp.pyx). One form in: the words the TS layer packs (send_word / recv_word /
// sge_word, common.h) with the objects a send request names beside them (an AH, a window
// and its MR); one parser into one structure (SendRequest), checked in full before
// anything is posted; two back ends in qp_post.cc (an ibv_post_send chain, built here by
// BuildChain, and the ibv_wr_* calls). qp.cc and srq.cc own the queues.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace rdma_interop {

/// Throws the VerbsError of a post the provider refused (`ret` != 0) at request `index`;
/// `what` names the kind of request in the message ("work request", "receive request").
[[noreturn]] void ThrowRefused(Napi::Env env, const char *call, const std::string &device, int ret,
                               long index, const char *what);

/// The u32 words of a Uint32Array argument (VerbsArgumentError `words` naming `call` otherwise).
Napi::Uint32Array WordsArgument(Napi::Env env, const Napi::Value &v, const char *call);

/// A receive list read from recv_word / sge_word words, linked for ibv_post_recv or
/// ibv_post_srq_recv (the vectors own what the requests point into: never copied).
struct RecvChain {
  std::vector<ibv_recv_wr> wrs;
  std::vector<std::vector<ibv_sge>> sges;
  /// Reads `count` requests packed as recv_word / sge_word from `words` (info[0]) and links
  /// them; reuses this chain's vectors, so a chain kept per queue allocates nothing once
  /// grown. Checks every length before anything is posted.
  void Unpack(Napi::Env env, const Napi::Value &words, const Napi::Value &count);
  /// postRecv(words, count) of a QP or an SRQ: Unpack, then `post(first, &bad)`
  /// (ibv_post_recv or ibv_post_srq_recv), a refusal thrown as Check does.
  template <typename Post>
  void PostPacked(Napi::Env env, const Napi::CallbackInfo &info, const char *call,
                  const std::string &device, Post post) {
    Unpack(env, info[0], info[1]);
    if (wrs.empty()) return;
    ibv_recv_wr *bad = nullptr;
    Check(env, call, device, post(wrs.data(), &bad), bad);
  }
  /// postRecvCopies(words, count) of an SRQ: the one request packed in `words`, linked
  /// `count` times (wr_id counting up from its own, every copy on its SGE list), then
  /// `post(first, &bad)` as PostPacked.
  template <typename Post>
  void PostCopies(Napi::Env env, const Napi::CallbackInfo &info, const char *call,
                  const std::string &device, Post post) {
    uint32_t count = ReadU32(info[1], "count", 0xffff);
    if (count == 0) ThrowArgument(env, "count", "must be at least 1");
    Unpack(env, info[0], Napi::Number::New(env, 1));
    const ibv_recv_wr first = wrs[0];
    wrs.assign(count, first);
    for (uint32_t i = 0; i < count; i++) {
      wrs[i].wr_id = first.wr_id + i;
      wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
    }
    ibv_recv_wr *bad = nullptr;
    Check(env, call, device, post(wrs.data(), &bad), bad);
  }
  /// Throws the VerbsError of a refused post (`ret` != 0), naming the refused request.
  void Check(Napi::Env env, const char *call, const std::string &device, int ret, ibv_recv_wr *bad);
};

/// One send request, as its send_word words and handles say (the one structure both back
/// ends post from).
struct SendRequest {
  uint64_t wrId = 0, remoteAddr = 0, compareAdd = 0, swap = 0, atomicValue = 0, flushLength = 0;
  uint32_t opcode = 0, flags = 0, rkey = 0, imm = 0, flushType = 0, flushLevel = 0;
  uint32_t invalidateRkey = 0;  // LOCAL_INV / SEND_WITH_INV
  uint32_t remoteQpn = 0, remoteQkey = 0;
  AhPtr ah;  // UD destination (null: none)
  // BIND_MW: the window, its new rkey and what it binds to (bindMr keeps the MR registered).
  MwPtr mw;
  uint32_t bindRkey = 0;
  ibv_mw_bind_info bindInfo{};
  std::shared_ptr<ResourceHandle> bindMr;
  std::vector<ibv_sge> sges;
};

/// A list of send requests parsed from words, reused across posts (no allocation per post
/// once grown), and its ibv_post_send chain (back end 1) once built.
struct SendList {
  std::vector<SendRequest> reqs;  // the first `count` are the list
  uint32_t count = 0;
  std::vector<ibv_send_wr> wrs;  // BuildChain's chain over reqs (sg_list points into them)
  bool named = false;            // some request holds a handle (Forget drops them)

  /// Reads `n` requests packed as send_word / sge_word from `w` (`len` words), their
  /// handles from the JS array `handles` (undefined when none names one). Checks every
  /// request before returning; returns the word offset just past the last one.
  size_t Parse(Napi::Env env, const uint32_t *w, size_t len, uint32_t n, const Napi::Value &handles);
  /// Back end 1's form: the parsed requests as one linked ibv_send_wr chain (the
  /// per-opcode fill of the legacy verbs, written once).
  void BuildChain();
  /// Drops the handles the parsed requests hold (a reused list keeps nothing alive).
  void Forget();
};

}  // namespace rdma_interop
