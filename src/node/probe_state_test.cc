#include "node/probe_state.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "net/http_server.h"
#include "net/self_signed_certificate.h"
#include "node/pod_prober.h"
#include "node/probe_run.h"

namespace strata::node {
namespace {

using std::chrono::seconds;

api::Probe Every(int64_t period, int64_t failures, int64_t successes = 1, int64_t delay = 0) {
  api::Probe probe;
  probe.period_seconds = period;
  probe.failure_threshold = failures;
  probe.success_threshold = successes;
  probe.initial_delay_seconds = delay;
  return probe;
}

const ProbeResult kPass{true, ""};

// A pod reached at `own_port`, whose exec probes find sh and coreutils.
ProbeTarget Target(int own_port) {
  ProbeTarget target;
  target.own_port = own_port;
  target.env = {{"PATH", "/usr/bin:/bin"}};
  return target;
}
ProbeResult Fail(std::string why) { return {false, std::move(why)}; }

TEST(ProbeStateTest, AttemptsWaitForTheInitialDelayThenComeEachPeriodOneAtATime) {
  FakeClock clock;
  ProbeState state(ProbeKind::kLiveness, Every(10, 3, 1, 5), clock.Now());
  EXPECT_FALSE(state.Due(clock.Now()));
  clock.Advance(seconds(5));
  ASSERT_TRUE(state.Due(clock.Now()));
  state.Start(clock.Now());
  clock.Advance(seconds(30));
  EXPECT_FALSE(state.Due(clock.Now())) << "an attempt still runs";
  state.Finish(kPass);
  EXPECT_TRUE(state.Due(clock.Now()));
  state.Start(clock.Now());
  state.Finish(kPass);
  clock.Advance(seconds(9));
  EXPECT_FALSE(state.Due(clock.Now()));
  clock.Advance(seconds(1));
  EXPECT_TRUE(state.Due(clock.Now()));
}

TEST(ProbeStateTest, LivenessPassesUntilFailureThresholdFailuresInARow) {
  FakeClock clock;
  ProbeState state(ProbeKind::kLiveness, Every(1, 3), clock.Now());
  EXPECT_TRUE(state.passing());
  auto attempt = [&](const ProbeResult& result) {
    state.Start(clock.Now());
    bool changed = state.Finish(result);
    clock.Advance(seconds(1));
    return changed;
  };
  EXPECT_FALSE(attempt(Fail("HTTP probe failed with statuscode: 500")));
  EXPECT_FALSE(attempt(Fail("HTTP probe failed with statuscode: 500")));
  EXPECT_FALSE(attempt(kPass)) << "a pass breaks the run";
  EXPECT_FALSE(attempt(Fail("a")));
  EXPECT_FALSE(attempt(Fail("b")));
  EXPECT_FALSE(state.failed());
  EXPECT_TRUE(attempt(Fail("HTTP probe failed with statuscode: 503")));
  EXPECT_FALSE(state.passing());
  EXPECT_TRUE(state.failed());
  EXPECT_EQ(state.last_failure(), "HTTP probe failed with statuscode: 503");
}

TEST(ProbeStateTest, ReadinessStartsFailingAndNeedsSuccessThresholdPassesInARow) {
  FakeClock clock;
  ProbeState state(ProbeKind::kReadiness, Every(1, 2, 2), clock.Now());
  EXPECT_FALSE(state.passing());
  auto attempt = [&](const ProbeResult& result) {
    state.Start(clock.Now());
    state.Finish(result);
    clock.Advance(seconds(1));
    return state.passing();
  };
  EXPECT_FALSE(attempt(kPass));
  EXPECT_FALSE(attempt(Fail("x")));
  EXPECT_FALSE(attempt(kPass));
  EXPECT_TRUE(attempt(kPass));
  EXPECT_TRUE(attempt(Fail("x")));
  EXPECT_FALSE(attempt(Fail("x")));
}

TEST(ProbeStateTest, StartupFailsOnlyAfterFailureThresholdFailures) {
  FakeClock clock;
  ProbeState state(ProbeKind::kStartup, Every(1, 2), clock.Now());
  EXPECT_FALSE(state.passing());
  EXPECT_FALSE(state.failed());
  state.Start(clock.Now());
  state.Finish(Fail("x"));
  EXPECT_FALSE(state.failed());
  clock.Advance(seconds(1));
  state.Start(clock.Now());
  state.Finish(Fail("x"));
  EXPECT_TRUE(state.failed());
}

// Ticks `prober` (advancing the clock a second a time) until `done` says so, for at most 10 s
// of real time.
template <typename Done>
ProbeVerdict TickUntil(PodProber& prober, FakeClock& clock, Done done) {
  ProbeVerdict verdict;
  const auto give_up = std::chrono::steady_clock::now() + seconds(10);
  while (std::chrono::steady_clock::now() < give_up) {
    ProbeVerdict now = prober.Tick(clock.Now());
    verdict.failures.insert(verdict.failures.end(), now.failures.begin(), now.failures.end());
    verdict.ready = now.ready;
    if (now.kill) verdict.kill = now.kill;
    if (done(verdict)) return verdict;
    clock.Advance(seconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "the prober never got there";
  return verdict;
}

TEST(PodProberTest, HttpLivenessFailingPastItsThresholdAsksForTheKill) {
  std::atomic<int> status{200};
  net::HttpServer server(net::HttpServerOptions{});
  server.Fallback([&](net::HttpRequest request, net::ResponseWriter writer) {
    writer.Respond(net::HttpResponse::Text(request.Header("X-Probe") == "yes" ? status.load() : 400,
                                           "text/plain", "ok"));
  });
  ASSERT_TRUE(server.Start().ok());
  api::ProcessTemplate process;
  process.liveness_probe = Every(1, 2);
  process.liveness_probe->path = "/healthz";
  process.liveness_probe->http_headers = {{"X-Probe", "yes"}};
  FakeClock clock;
  PodProber prober(process, Target(server.port()), clock.Now());
  // Passing: three attempts go by without a failure.
  int ticks = 0;
  ProbeVerdict verdict = TickUntil(prober, clock, [&](const ProbeVerdict&) { return ++ticks > 6; });
  EXPECT_TRUE(verdict.failures.empty()) << verdict.failures.front();
  EXPECT_FALSE(verdict.kill.has_value());
  status = 500;
  verdict = TickUntil(prober, clock, [](const ProbeVerdict& v) { return v.kill.has_value(); });
  EXPECT_EQ(verdict.kill, "Liveness probe failed: HTTP probe failed with statuscode: 500");
  ASSERT_FALSE(verdict.failures.empty());
  EXPECT_EQ(verdict.failures.front(),
            "Liveness probe failed: HTTP probe failed with statuscode: 500");
}

TEST(PodProberTest, StartupGatesReadinessWhichFollowsATcpPort) {
  // A listening socket the test opens when it wants the readiness probe to pass.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);  // bound, not listening: connections are refused

  char dir_template[] = "/tmp/probe_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string marker = std::string(dir_template) + "/started";
  api::ProcessTemplate process;
  process.startup_probe = Every(1, 1000);
  process.startup_probe->action = api::ProbeAction::kExec;
  process.startup_probe->command = {"test", "-e", marker};
  process.readiness_probe = Every(1, 1);
  process.readiness_probe->action = api::ProbeAction::kTcpSocket;
  process.readiness_probe->port = port;
  FakeClock clock;
  PodProber prober(process, Target(0), clock.Now());
  int ticks = 0;
  ProbeVerdict verdict = TickUntil(prober, clock, [&](const ProbeVerdict&) { return ++ticks > 4; });
  for (const std::string& failure : verdict.failures) {
    EXPECT_EQ(failure.rfind("Startup probe failed: command \"test -e", 0), 0) << failure;
  }
  EXPECT_FALSE(verdict.ready);
  ASSERT_EQ(close(open(marker.c_str(), O_CREAT | O_WRONLY, 0600)), 0);
  verdict = TickUntil(prober, clock, [](const ProbeVerdict& v) {
    return !v.failures.empty() && v.failures.back().rfind("Readiness", 0) == 0;
  });
  EXPECT_EQ(
      verdict.failures.back(),
      fmt::format("Readiness probe failed: dial tcp 127.0.0.1:{}: connect: Connection refused",
                  port));
  ASSERT_EQ(listen(listener, 4), 0);
  verdict = TickUntil(prober, clock, [](const ProbeVerdict& v) { return v.ready; });
  EXPECT_TRUE(verdict.ready);
  close(listener);
  unlink(marker.c_str());
  rmdir(dir_template);
}

TEST(ProbeRunTest, HttpsProbesAnyCertificateAndHttpToATlsServerFails) {
  Result<std::pair<std::string, std::string>> certificate = net::SelfSignedCertificate("127.0.0.1");
  ASSERT_TRUE(certificate.has_value()) << certificate.error().ToString();
  net::HttpServerOptions options;
  options.tls_certificate_pem = certificate->first;
  options.tls_key_pem = certificate->second;
  net::HttpServer server(options);
  server.Fallback([](net::HttpRequest request, net::ResponseWriter writer) {
    writer.Respond(net::HttpResponse::Text(request.Path() == "/ok" ? 204 : 503, "text/plain", ""));
  });
  ASSERT_TRUE(server.Start().ok());
  api::Probe probe;
  probe.scheme = "HTTPS";
  probe.path = "/ok";
  EXPECT_TRUE(RunProbe(probe, Target(server.port())).success);
  probe.path = "/down";
  EXPECT_EQ(RunProbe(probe, Target(server.port())).message,
            "HTTP probe failed with statuscode: 503");
  probe.scheme = "HTTP";
  EXPECT_FALSE(RunProbe(probe, Target(server.port())).success) << "plain HTTP to a TLS server";
}

TEST(ProbeRunTest, ExecReportsTheOutputOfAFailedCommandAndKillsOneThatRunsTooLong) {
  api::Probe probe;
  probe.action = api::ProbeAction::kExec;
  ProbeTarget target = Target(0);
  probe.command = {"sh", "-c", "echo not warm yet; exit 3"};
  ProbeResult result = RunProbe(probe, target);
  EXPECT_FALSE(result.success);
  EXPECT_EQ(result.message, "not warm yet");
  probe.command = {"sh", "-c", "exit 0"};
  EXPECT_TRUE(RunProbe(probe, target).success);
  probe.command = {"sh", "-c", "exit 4"};
  EXPECT_EQ(RunProbe(probe, target).message, "command \"sh -c exit 4\" exited with code 4");
  probe.command = {"sleep", "30"};
  EXPECT_EQ(RunProbe(probe, target).message, "command \"sleep 30\" timed out");
  probe.command = {"no-such-program-here"};
  EXPECT_EQ(RunProbe(probe, target).message,
            "command \"no-such-program-here\": no-such-program-here: not found");
}

}  // namespace
}  // namespace strata::node
