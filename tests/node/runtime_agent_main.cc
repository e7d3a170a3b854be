// A minimal node agent for agent_restart_test: creates a ProcessRuntime on the data dir given as
// argv[1], renews the node's lease for argv[3] seconds when given (once: as an agent that then
// loses the control plane), starts pod "survivor" with argv[2] worker processes that sleep,
// prints "started" and then waits to be killed (the test sends SIGKILL, as a crash would).

#include <unistd.h>

#include <cstdio>
#include <string>

#include "node/process_runtime.h"

int main(int argc, char** argv) {
  using strata::node::PodSpec;
  using strata::node::ProcessRuntime;
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s DATA_DIR WORKERS [LEASE_SECONDS]\n", argv[0]);
    return 3;
  }
  ProcessRuntime::Options options;
  options.data_dir = argv[1];
  auto runtime = ProcessRuntime::Create(options);
  if (!runtime) {
    std::fprintf(stderr, "%s\n", runtime.error().ToString().c_str());
    return 1;
  }
  if (argc == 4) {
    strata::Status renewed = (*runtime)->RenewLease(strata::RealClock::Instance().Now() +
                                                    std::chrono::seconds(std::stoi(argv[3])));
    if (!renewed.ok()) {
      std::fprintf(stderr, "%s\n", renewed.ToString().c_str());
      return 1;
    }
  }
  PodSpec spec;
  spec.uid = "survivor";
  for (int i = 0; i < std::stoi(argv[2]); ++i) {
    spec.processes.push_back({"worker-" + std::to_string(i), {"/bin/sleep", "1000"}, {}, ""});
  }
  strata::Status started = (*runtime)->Start(spec);
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  std::printf("started\n");
  std::fflush(stdout);
  while (true) pause();
}
