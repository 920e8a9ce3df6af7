// Work requests, apart from the queues they are posted on (as pyverbs keeps wr.pyx apart
// from qp.pyx): the send and receive lists read from JS objects or from the words the TS
// layer packs (send_word / recv_word / sge_word, common.h), checked in full before anything
// is posted, and linked for one doorbell. qp_post.cc posts them; qp.cc and srq.cc own the
// queues.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace rdma_interop {

/// Links `wrs` into one list, each on its own SGE vector (the vectors own the memory
/// sg_list points into, so neither may move after this).
template <typename Wr>
void LinkRequests(std::vector<Wr> &wrs, std::vector<std::vector<ibv_sge>> &sges) {
  for (size_t i = 0; i < wrs.size(); i++) {
    wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
    wrs[i].num_sge = static_cast<int>(sges[i].size());
    wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
  }
}

/// Throws the VerbsError of a post the provider refused (`ret` != 0) at request `index`;
/// `what` names the kind of request in the message ("work request", "receive request").
[[noreturn]] void ThrowRefused(Napi::Env env, const char *call, const std::string &device, int ret,
                               long index, const char *what);

/// Reads a JS SGE list ([{ addr, length, lkey }]) into `out` (undefined: none).
void ReadSges(const Napi::Value &v, std::vector<ibv_sge> &out);

/// { mr, addr, length, access } -> ibv_mw_bind_info; `keep` holds the MR until posted.
void ReadBindInfo(Napi::Env env, const Napi::Value &v, ibv_mw_bind_info &out,
                  std::vector<std::shared_ptr<ResourceHandle>> &keep);

/// A receive list parsed from JS ([{ wrId, sgList }]), linked for ibv_post_recv or
/// ibv_post_srq_recv (the vectors own what the requests point into: never copied).
struct RecvChain {
  std::vector<ibv_recv_wr> wrs;
  std::vector<std::vector<ibv_sge>> sges;
  void Parse(Napi::Env env, const Napi::Value &v);
  /// Reads `count` requests packed as recv_word / sge_word from `words` (info[0]) and links
  /// them; reuses this chain's vectors, so a chain kept per queue allocates nothing once
  /// grown. Checks every length before anything is posted.
  void Unpack(Napi::Env env, const Napi::Value &words, const Napi::Value &count);
  /// postRecvPacked(words, count) of a QP or an SRQ: Unpack, then `post(first, &bad)`
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

/// A parsed chain of legacy send requests for ibv_post_send (the SGE vectors own the
/// memory sg_list points into, so the struct must not be copied after Link()).
struct SendChain {
  std::vector<ibv_send_wr> wrs;
  std::vector<std::vector<ibv_sge>> sges;
  std::vector<AhPtr> ahs;  // UD destinations, alive as long as the chain
  std::vector<std::shared_ptr<ResourceHandle>> keep;  // BIND_MW's window and MR
  void Link() { LinkRequests(wrs, sges); }
  /// Reads a JS list of send requests (postSend, prepare) and links it.
  void Parse(Napi::Env env, const Napi::Value &v);
};

/// One request of the ibv_wr_* path, parsed before anything is started.
struct ExRequest {
  uint64_t wrId, remoteAddr, compareAdd, swap;
  uint32_t opcode, flags, rkey, imm;
  std::vector<ibv_sge> sges;
  uint64_t atomicValue;
  uint64_t flushLength;
  uint32_t flushType, flushLevel;
  // LOCAL_INV / SEND_WITH_INV / BIND_MW (object path only; postPacked leaves them unset).
  uint32_t invalidateRkey, bindRkey;
  MwPtr mw;
  ibv_mw_bind_info bindInfo;
  std::vector<std::shared_ptr<ResourceHandle>> keep;  // BIND_MW's MR, alive until posted
};

/// Reads a JS list of send requests for the ibv_wr_* path (postSendEx) into `out`.
void ParseExRequests(Napi::Env env, const Napi::Value &v, std::vector<ExRequest> &out);

/// Reads `n` send requests packed as send_word / sge_word from `w` (`len` words) into
/// `ex` (the ibv_wr_* path, grown to n and reused) or, without `toEx`, into `chain`
/// (assigned n requests, not yet linked). Checks every request before returning; returns
/// the word offset just past the last one.
size_t UnpackSendWords(Napi::Env env, const uint32_t *w, size_t len, uint32_t n, bool toEx,
                       SendChain &chain, std::vector<ExRequest> &ex);

}  // namespace rdma_interop
