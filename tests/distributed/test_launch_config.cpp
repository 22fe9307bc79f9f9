// Where a process sits in a data-parallel job: torchrun's and Slurm's variables, Slurm node lists,
// explicit master addresses, and the --shard K/N slices of a sweep.
#include <gtest/gtest.h>

#include <map>

#include "distributed/launch_config.h"
#include "run/shard.h"
#include "test_helpers.h"

using liftlab::test::has;

namespace {

liftlab::EnvironmentLookup env(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected std::invalid_argument";
    return "";
}

}  // namespace

TEST(LaunchConfig, NoLauncherMeansOneProcess) {
    EXPECT_FALSE(liftlab::launch_config_from_environment(env({})).has_value());
    // A one-task Slurm job (a sweep array task) is not a data-parallel job.
    EXPECT_FALSE(
        liftlab::launch_config_from_environment(env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}))
            .has_value());
}

TEST(LaunchConfig, ReadsTorchrunVariables) {
    const auto c = liftlab::launch_config_from_environment(env({{"RANK", "3"},
                                                                {"WORLD_SIZE", "4"},
                                                                {"MASTER_ADDR", "10.1.2.3"},
                                                                {"MASTER_PORT", "29611"}}));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->rank, 3);
    EXPECT_EQ(c->world_size, 4);
    EXPECT_EQ(c->master_addr, "10.1.2.3");
    EXPECT_EQ(c->master_port, 29611);
    EXPECT_EQ(c->source, "torchrun");
    EXPECT_TRUE(c->distributed());
}

TEST(LaunchConfig, ReadsSlurmVariablesWithTheFirstNodeAsMaster) {
    const auto c = liftlab::launch_config_from_environment(env(
        {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_NODELIST", "gpu[07-10,12]"}}));
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->rank, 1);
    EXPECT_EQ(c->world_size, 8);
    EXPECT_EQ(c->master_addr, "gpu07");
    EXPECT_EQ(c->master_port, liftlab::LaunchConfig::kDefaultPort);
    EXPECT_EQ(c->source, "slurm");
    // MASTER_ADDR (set by the sbatch script) wins over the node list.
    const auto d = liftlab::launch_config_from_environment(env({{"SLURM_PROCID", "0"},
                                                                {"SLURM_NTASKS", "2"},
                                                                {"SLURM_JOB_NODELIST", "n[1-2]"},
                                                                {"MASTER_ADDR", "head"}}));
    EXPECT_EQ(d->master_addr, "head");
}

TEST(LaunchConfig, FirstSlurmHost) {
    EXPECT_EQ(liftlab::first_slurm_host("node01"), "node01");
    EXPECT_EQ(liftlab::first_slurm_host("a,b,c"), "a");
    EXPECT_EQ(liftlab::first_slurm_host("node[003-005]"), "node003");
    EXPECT_EQ(liftlab::first_slurm_host("node[9,11]"), "node9");
    EXPECT_EQ(liftlab::first_slurm_host("cpu1,node[2-3]"), "cpu1");
    EXPECT_TRUE(has(message_of([] { liftlab::first_slurm_host("node[1-3"); }), "malformed"));
    EXPECT_TRUE(has(message_of([] { liftlab::first_slurm_host(""); }), "malformed"));
}

TEST(LaunchConfig, BadValuesNameTheVariable) {
    EXPECT_TRUE(
        has(message_of([] {
                liftlab::launch_config_from_environment(env({{"RANK", "x"}, {"WORLD_SIZE", "2"}}));
            }),
            "RANK"));
    EXPECT_TRUE(
        has(message_of([] {
                liftlab::launch_config_from_environment(env({{"RANK", "2"}, {"WORLD_SIZE", "2"}}));
            }),
            "not below the world size 2"));
    EXPECT_TRUE(has(message_of([] {
                        liftlab::launch_config_from_environment(
                            env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}));
                    }),
                    "SLURM_JOB_NODELIST"));
}

TEST(LaunchConfig, ParsesMasterAddresses) {
    liftlab::LaunchConfig c;
    liftlab::parse_master_address("127.0.0.1:29777", c);
    EXPECT_EQ(c.master_addr, "127.0.0.1");
    EXPECT_EQ(c.master_port, 29777);
    liftlab::parse_master_address("head", c);
    EXPECT_EQ(c.master_addr, "head");
    EXPECT_EQ(c.master_port, 29777);  // kept
    EXPECT_TRUE(has(message_of([&] { liftlab::parse_master_address(":1", c); }), "no host"));
    EXPECT_TRUE(has(message_of([&] { liftlab::parse_master_address("h:99999", c); }), "65536"));
}

TEST(Shard, ParsesKOverN) {
    const auto s = liftlab::parse_shard("2/4");
    EXPECT_EQ(s.index, 2);
    EXPECT_EQ(s.count, 4);
    EXPECT_TRUE(s.sharded());
    EXPECT_TRUE(s.owns(2));
    EXPECT_TRUE(s.owns(6));
    EXPECT_FALSE(s.owns(3));
    for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "1/4x", ""})
        EXPECT_TRUE(has(message_of([&] { liftlab::parse_shard(bad); }), "K/N")) << bad;
}
