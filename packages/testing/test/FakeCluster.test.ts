import { ClusterSuite, FakeCluster } from "@hosting/testing"

ClusterSuite.run("fake", FakeCluster.layer())
