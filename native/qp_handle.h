// The handle of a queue pair (common.h's ResourceHandle): shared by the QP object
// (qp.cc) and the posts (qp_post.cc).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "common.h"

namespace rdma_interop {

struct QpHandle : ResourceHandle {
  static constexpr Rank kRank = Rank::kQp;
  ibv_qp *qp = nullptr;
  ibv_qp_ex *qpx = nullptr;  // non-null when created for the ibv_wr_* API
  uint64_t sendOps = 0;      // the IBV_QP_EX_WITH_* flags it was created with
  PdPtr pd;
  CqPtr sendCq, recvCq;
  CmIdPtr cmId;  // set when rdma_cm owns the QP (destroyed with rdma_destroy_qp)
  SrqPtr srq;    // set when it receives through an SRQ
  /// The multicast groups it is attached to (verbs_ext.cc): detached before the QP is
  /// destroyed, which uverbs refuses (EBUSY) while any is attached (uverbs_std_types.c
  /// uverbs_free_qp).
  std::vector<std::pair<ibv_gid, uint16_t>> mcast;
  int Destroy() override {
    if (qp == nullptr) return 0;
    int ret = 0;
    for (auto &group : mcast) ibv_detach_mcast(qp, &group.first, group.second);
    mcast.clear();
    if (cmId) {
      rdma_destroy_qp(cmId->id);
      cmId->hasQp = false;
    } else {
      ret = ibv_destroy_qp(qp);
    }
    if (ret == 0) qp = nullptr;
    return ret;
  }
  bool Live() const override { return qp != nullptr; }
  /// Listed by its PD, CQs and cm_id, which release it first when they close with cascade.
  void Register(const std::shared_ptr<QpHandle> &self) {
    device = pd->device;
    pd->children.Add(self);
    sendCq->children.Add(self);
    if (recvCq != sendCq) recvCq->children.Add(self);
    if (cmId) cmId->children.Add(self);
    if (srq) srq->children.Add(self);
  }
  ~QpHandle() override { Destroy(); }
};

}  // namespace rdma_interop
