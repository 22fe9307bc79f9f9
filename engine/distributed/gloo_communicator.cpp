// The Communicator on LibTorch's own distributed package: c10d's TCPStore for the rendezvous and
// ProcessGroupGloo for the collectives — the engine torchrun and DDP use on CPU.
//
// Debian's libtorch-dev 1.13 ships the c10d headers and exports ProcessGroupGloo/TCPStore from
// libtorch_cpu, but ProcessGroupGloo.hpp is empty unless USE_C10D_GLOO is defined and it includes
// Gloo's own headers (Debian package libgloo-dev). Both are arranged here, in this file only.
#include "core/c_numbers.h"
#include "distributed/communicator.h"
#include "distributed/launch_config.h"

#if __has_include(<gloo/context.h>)
#define LIFTLAB_HAVE_GLOO 1
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

#include <chrono>
#include <cstdlib>
#include <string>

namespace liftlab {

#ifdef LIFTLAB_HAVE_GLOO

namespace {

bool is_loopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

class GlooCommunicator : public Communicator {
public:
    GlooCommunicator(const LaunchConfig& c)
        : rank_(c.rank),
          world_(c.world_size),
          timeout_(static_cast<int64_t>(c.timeout_seconds * 1000)) {
        const std::string where = c.master_addr + ":" + std::to_string(c.master_port);
        try {
            c10d::TCPStoreOptions so;
            so.port = static_cast<std::uint16_t>(c.master_port);
            so.isServer = c.rank == 0;
            so.numWorkers = c.world_size;
            so.waitWorkers = true;
            so.timeout = timeout_;
            auto store = c10::make_intrusive<c10d::TCPStore>(c.master_addr, so);
            auto options = c10d::ProcessGroupGloo::Options::create(timeout_);
            // On loopback, bind Gloo to 127.0.0.1 too (never another interface). Elsewhere Gloo
            // picks the interface of the host name, or GLOO_SOCKET_IFNAME as in PyTorch.
            const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
            if (is_loopback(c.master_addr))
                options->devices.push_back(
                    c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
            else if (ifname && *ifname)
                options->devices.push_back(
                    c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
            else
                options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
            options->threads = 1;  // one collective at a time; intra-op threads do the maths
            group_ =
                c10::make_intrusive<c10d::ProcessGroupGloo>(store, c.rank, c.world_size, options);
        } catch (const std::exception& e) {
            throw CommunicationError(
                "distributed: rank " + std::to_string(c.rank) + " of " +
                std::to_string(c.world_size) + " could not join the process group at " + where +
                " within " + c_shortest(c.timeout_seconds) +
                " s (is every rank started, with the same --master?): " + e.what());
        }
    }

    int rank() const override { return rank_; }
    int world_size() const override { return world_; }

    void all_reduce_sum(torch::Tensor& t, const char* what) override {
        count_bytes(t);
        std::vector<at::Tensor> v = {t};
        run([&] { return group_->allreduce(v); }, "all-reduce of", what);
    }

    void broadcast(torch::Tensor& t, int root, const char* what) override {
        count_bytes(t);
        std::vector<at::Tensor> v = {t};
        c10d::BroadcastOptions o;
        o.rootRank = root;
        run([&] { return group_->broadcast(v, o); }, "broadcast of", what);
    }

    void barrier() override {
        run([&] { return group_->barrier(); }, "barrier", "");
    }

private:
    template <typename Start>
    void run(Start start, const char* op, const char* what) {
        try {
            start()->wait(timeout_);
        } catch (const std::exception& e) {
            throw CommunicationError("distributed: rank " + std::to_string(rank_) + " of " +
                                     std::to_string(world_) + ": " + op + (*what ? " " : "") +
                                     what +
                                     " failed — another rank died or did not answer within " +
                                     c_shortest(timeout_.count() / 1000.0) + " s: " + e.what());
        }
    }

    int rank_, world_;
    std::chrono::milliseconds timeout_;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

std::shared_ptr<Communicator> join_process_group(const LaunchConfig& config) {
    if (!config.distributed()) return nullptr;
    return std::make_shared<GlooCommunicator>(config);
}

#else

std::shared_ptr<Communicator> join_process_group(const LaunchConfig& config) {
    if (!config.distributed()) return nullptr;
    throw CommunicationError(
        "distributed: this build has no Gloo headers (Debian package libgloo-dev), so c10d's "
        "ProcessGroupGloo is unavailable; install it and rebuild");
}

#endif

}  // namespace liftlab
