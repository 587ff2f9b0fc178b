export * as KubernetesCluster from "./KubernetesCluster.js"
