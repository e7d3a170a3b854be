#include "training_fixture.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace strata::platform_test {
namespace {

bool Bindable(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return free;
}

}  // namespace

// The first of kMasterPorts free consecutive ports for the jobs' rendezvous, below the kernel's
// ephemeral range (32768 and up by default): a port there can be taken at any moment by another
// process's outgoing connection (the tests beside this one under ctest -j), and a job whose rank
// 0 cannot bind its MASTER_PORT fails. Blocks start at a place that depends on the process, so
// that tests running at once try different ones first.
int FreeMasterPorts() {
  constexpr int kMasterPorts = 16;
  constexpr int kFirst = 20000;
  constexpr int kBlocks = (32768 - kFirst) / kMasterPorts;
  for (int i = 0; i < kBlocks; ++i) {
    int start = kFirst + ((getpid() + i) % kBlocks) * kMasterPorts;
    bool all_free = true;
    for (int port = start; port < start + kMasterPorts && all_free; ++port) {
      all_free = Bindable(port);
    }
    if (all_free) return start;
  }
  return 29500;
}

}  // namespace strata::platform_test
