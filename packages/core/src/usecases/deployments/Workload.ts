/**
 * What a deploy asks of the cluster, worked out from the build and the
 * deploy alone: the names of the agent's ConfigMap and Secret, the
 * environment, the labels and the workload. No service is reached here.
 */
import { Option } from "effect"
import * as Agent from "../../model/Agent.js"
import { type DeploymentId, labelKeys, labelValue, managedByValue } from "../../model/Deployment.js"
import type { AccountName, AgentName } from "../../model/Ids.js"
import type { EnvOverrides, SecretName } from "../../model/Secret.js"
import type { Workload } from "../../ports/Cluster.js"

/** Name of the ConfigMap that carries the agent's spec and environment. */
export const configMapName = (agent: AgentName) => `${agent}-config`

/** Name of the Secret that carries the values of the secrets a deployment refers to. */
export const secretName = (agent: AgentName) => `${agent}-secrets`

/** The key of the agent's ConfigMap that holds the spec's YAML text. */
export const specFile = "agent.yaml"

/**
 * The environment of a deployment: the spec's `env`, with the deploy's own
 * entries in place of those of the same name. Plain values on one side;
 * on the other, env name to the name of the secret it reads.
 */
export const environmentOf = (spec: Agent.SpecMap, overrides: EnvOverrides = {}) => {
  const plain: Record<string, string> = { ...Agent.envOf(spec) }
  const secrets: Record<string, SecretName> = { ...Agent.secretRefsOf(spec) }
  for (const [name, value] of Object.entries(overrides)) {
    delete plain[name]
    delete secrets[name]
    if (typeof value === "string") plain[name] = value
    else secrets[name] = value.secret
  }
  return { plain, secrets }
}

/** The labels every cluster object of a deployment carries. */
export const labelsOf = (
  id: DeploymentId,
  target: AccountName,
  publisher: AccountName,
  agent: AgentName,
  build: Agent.Build
): Record<string, string> => ({
  [labelKeys.managedBy]: managedByValue,
  [labelKeys.account]: labelValue(target),
  [labelKeys.publisher]: labelValue(publisher),
  [labelKeys.agent]: labelValue(agent),
  [labelKeys.build]: labelValue(build.build_id),
  [labelKeys.deployment]: labelValue(id)
})

/**
 * The workload of a deployment: the build's image with the spec's replicas
 * (0 to 20, else 1) and port (when it is one), its plain env, and each secret
 * env entry read from the deployment's Secret under its own name.
 */
export const workloadOf = (input: {
  readonly namespace: string
  readonly publisher: AccountName
  readonly agent: Agent.AgentRecord
  readonly build: Agent.Build
  readonly env: Record<string, string>
  readonly secrets: Record<string, SecretName>
  readonly labels: Record<string, string>
}): Workload => {
  const { agent, build } = input
  const port = build.spec["port"]
  const replicas = build.spec["replicas"]
  return {
    namespace: input.namespace,
    name: agent.name,
    image: Agent.imageOf(agent, build),
    replicas: typeof replicas === "number" && Number.isInteger(replicas) && replicas >= 0 && replicas <= 20 ? replicas : 1,
    port: typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65536 ? Option.some(port) : Option.none(),
    env: input.env,
    secretEnv: Object.fromEntries(Object.keys(input.secrets).map((name) => [name, { name: secretName(agent.name), key: name }])),
    configMap: configMapName(agent.name),
    labels: input.labels,
    annotations: {
      "hosting.dev/agent-ref": `${input.publisher}/${agent.name}`,
      "hosting.dev/version": Option.getOrElse(build.version, () => "")
    }
  }
}
