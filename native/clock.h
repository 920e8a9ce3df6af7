// The clock of the round trips' hot loops (issue 13): post stamps and poll deadlines.
//
// Why not clock_gettime there: in the TCG guest the kernel finds the TSC unstable ("tsc:
// Marking TSC unstable due to TSCs unsynchronized") and runs on the hpet clocksource, so
// every clock_gettime is a system call plus an emulated HPET read: 18 us per call, measured
// with node's process.hrtime in the 6.1.0-56 guest, about half of an ib_atomic_lat round
// trip there. perftest stamps its posts with get_cycles() (rdtsc on x86-64) for the same
// reason; so does this clock, converted with a rate calibrated once per process against
// CLOCK_MONOTONIC, so its microseconds stay on that clock's time line (to the calibration's
// accuracy: differences are what the stamps are for). Without rdtsc, or if the
// calibration is implausible, the ticks are CLOCK_MONOTONIC nanoseconds. Like perftest's
// stamps, two taken on different CPUs differ by those CPUs' TSC offset: the TCG guest finds
// its TSCs unsynchronized, so a thread that moves between vCPUs can stamp a little back;
// a loop's median is unaffected.
#pragma once

#include <time.h>

#include <climits>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#define RDMA_INTEROP_HAVE_TSC 1
#endif

namespace rdma_interop {

inline int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

class FastClock {
 public:
  /// The process's clock, calibrated on first use (20 ms, once).
  static const FastClock &Get() {
    static const FastClock clock;
    return clock;
  }

  int64_t Ticks() const {
#ifdef RDMA_INTEROP_HAVE_TSC
    if (tsc_) return static_cast<int64_t>(__rdtsc());
#endif
    return MonotonicNs();
  }

  /// How many ticks `ns` nanoseconds last (for deadlines).
  int64_t TicksIn(int64_t ns) const { return static_cast<int64_t>(static_cast<double>(ns) * ticksPerNs_); }

  /// A tick count as CLOCK_MONOTONIC microseconds.
  double Microseconds(int64_t ticks) const {
    return (static_cast<double>(baseNs_) + static_cast<double>(ticks - baseTicks_) / ticksPerNs_) / 1000.0;
  }

 private:
  FastClock() {
    baseNs_ = MonotonicNs();
    baseTicks_ = baseNs_;
#ifdef RDMA_INTEROP_HAVE_TSC
    // A clock reading costs 18 us under TCG (the first ones far more: the code is not
    // translated yet), so each is bracketed by two TSC reads and matched with their
    // midpoint, and of several readings the one with the narrowest bracket counts (as NTP
    // keeps the sample with the least delay). Unbracketed, a 10 ms window was 0.4% off.
    struct Sample {
      int64_t ns;
      int64_t ticks;
    };
    auto best = [] {
      Sample out{0, 0};
      int64_t narrowest = INT64_MAX;
      for (int i = 0; i < 8; i++) {
        int64_t before = static_cast<int64_t>(__rdtsc());
        int64_t ns = MonotonicNs();
        int64_t width = static_cast<int64_t>(__rdtsc()) - before;
        if (width < narrowest) {
          narrowest = width;
          out = {ns, before + width / 2};
        }
      }
      return out;
    };
    constexpr int64_t kCalibrationNs = 20 * 1000 * 1000;
    Sample start = best();
    while (MonotonicNs() - start.ns < kCalibrationNs) {
    }
    Sample end = best();
    double rate = static_cast<double>(end.ticks - start.ticks) / static_cast<double>(end.ns - start.ns);
    // 10 MHz to 100 GHz: anything else is no usable TSC (a hypervisor that traps or
    // freezes it); stay on CLOCK_MONOTONIC then.
    if (rate > 0.01 && rate < 100.0) {
      tsc_ = true;
      ticksPerNs_ = rate;
      baseNs_ = end.ns;
      baseTicks_ = end.ticks;
    }
#endif
  }

  bool tsc_ = false;
  double ticksPerNs_ = 1.0;
  int64_t baseNs_ = 0;
  int64_t baseTicks_ = 0;
};

}  // namespace rdma_interop
