/**
 * The deployer's two reads of a Kubernetes cluster, through @kubernetes/client-node (1.x: 2.x needs
 * Node 22): an apps/v1 Deployment and a Flux helm.toolkit.fluxcd.io/v2 HelmRelease, by namespace
 * and name, with the cluster's endpoint and its credential as a bearer token. Thin on purpose: no
 * cluster runs here, so everything that can be wrong is judged in protocols/deploy/k8s-rollout.ts
 * and tested there; this only fetches. A 404 is null (not created yet: the monitor waits in pickup).
 */
import * as k8s from '@kubernetes/client-node';
import type { FluxHelmRelease, K8sDeployment } from '../../protocols/deploy/k8s-rollout.js';

export class K8sApi {
  private readonly apps: k8s.AppsV1Api;
  private readonly custom: k8s.CustomObjectsApi;

  constructor(endpoint: string, token: string | null) {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      // client-node refuses plain http:// unless TLS verification is "skipped"; there is no TLS to
      // verify there (an http:// endpoint is for `kubectl proxy` and other loopback fronts)
      clusters: [{ name: 'target', server: endpoint, skipTLSVerify: endpoint.startsWith('http:') }],
      users: [{ name: 'deployer', ...(token === null ? {} : { token }) }],
      contexts: [{ name: 'deployer', cluster: 'target', user: 'deployer' }],
      currentContext: 'deployer',
    });
    this.apps = kc.makeApiClient(k8s.AppsV1Api);
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  deployment(namespace: string, name: string): Promise<K8sDeployment | null> {
    return orNull(this.apps.readNamespacedDeployment({ namespace, name }) as Promise<unknown> as Promise<K8sDeployment>);
  }

  helmRelease(namespace: string, name: string): Promise<FluxHelmRelease | null> {
    return orNull(this.custom.getNamespacedCustomObject({ group: 'helm.toolkit.fluxcd.io', version: 'v2', namespace, plural: 'helmreleases', name }) as Promise<FluxHelmRelease>);
  }
}

async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  }
}
