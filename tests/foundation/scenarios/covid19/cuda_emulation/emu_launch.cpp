// Runs the COVID-19 CUDA C kernels on the CPU (tests only): compile with
//   g++ -std=c++20 -O2 -shared -fPIC -pthread -I <generated header dir> \
//       -DCOVID_BUILD_SOURCE='"/path/to/covid19_build.cu"' emu_launch.cpp
// and call emu_launch() through ctypes with a table of host pointers (struct CovidData).
//
// A persistent team of one std::thread per CUDA thread runs each block in turn; blocks run
// one after another, so __shared__ statics belong to the one running block.
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_emu.h"
#include COVID_BUILD_SOURCE

thread_local dim3 threadIdx;
thread_local dim3 blockIdx;
dim3 blockDim;
dim3 gridDim;
std::barrier<>* emu_block_barrier = nullptr;

namespace {

class Team {
 public:
  explicit Team(int size) : size_(size), finished_(size + 1) {
    for (int tid = 0; tid < size; ++tid) workers_.emplace_back([this, tid] { Work(tid); });
  }
  ~Team() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return size_; }

  // Runs job(tid) on every thread of the team for block `block` and waits for all of them.
  void RunBlock(int block, const std::function<void()>& job) {
    std::barrier<> block_barrier(size_);
    emu_block_barrier = &block_barrier;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      block_ = block;
      ++generation_;
    }
    wake_.notify_all();
    finished_.arrive_and_wait();
    emu_block_barrier = nullptr;
  }

 private:
  void Work(int tid) {
    long seen = 0;
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
      const std::function<void()>* job = job_;
      const int block = block_;
      lock.unlock();
      blockIdx.x = block;
      threadIdx.x = tid;
      (*job)();
      emu_block_barrier->arrive_and_drop();  // an exited thread leaves later barriers
      finished_.arrive_and_wait();
    }
  }

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::barrier<> finished_;
  long generation_ = 0;
  bool stop_ = false;
  const std::function<void()>* job_ = nullptr;
  int block_ = 0;
};

std::unique_ptr<Team> team;

typedef void (*StepKernel)(const CovidData*);

StepKernel step_kernel(const char* name) {
  if (!strcmp(name, "CudaControlUSStateOpenCloseStatusStep")) return CudaControlUSStateOpenCloseStatusStep;
  if (!strcmp(name, "CudaFederalGovernmentSubsidyStep")) return CudaFederalGovernmentSubsidyStep;
  if (!strcmp(name, "CudaVaccinationCampaignStep")) return CudaVaccinationCampaignStep;
  if (!strcmp(name, "CudaCovidAndEconomySimulationStep")) return CudaCovidAndEconomySimulationStep;
  if (!strcmp(name, "CudaComputeReward")) return CudaComputeReward;
  if (!strcmp(name, "CudaCovidStepFused")) return CudaCovidStepFused;
  return nullptr;
}

}  // namespace

// Launch kernel `name` on grid = num_envs blocks of `num_threads` threads. Returns 0, or -1
// for an unknown kernel name. (Done envs are reset by the generic reset, not by a kernel here.)
extern "C" int emu_launch(const char* name, const CovidData* d, int num_envs, int num_threads) {
  StepKernel kernel = step_kernel(name);
  if (kernel == nullptr) return -1;
  if (!team || team->size() != num_threads) {
    team.reset();
    team = std::make_unique<Team>(num_threads);
  }
  blockDim.x = num_threads;
  gridDim.x = num_envs;
  const std::function<void()> job = [&] { kernel(d); };
  for (int env = 0; env < num_envs; ++env) team->RunBlock(env, job);
  return 0;
}
