/**
 * spec.providerID of an EC2 node, `aws:///<zone>/<instance-id>`, as the AWS cloud provider
 * (and Karpenter's AWS provider) writes it: the one home of its format and parse.
 */

/** `aws:///<zone>/<instance-id>`. */
export function providerIdOf(zone: string, instanceId: string): string {
  return `aws:///${zone}/${instanceId}`;
}

/** The instance id of `aws:///<zone>/<instance-id>`, or undefined for any other text. */
export function instanceIdOfProviderId(providerId: string | undefined): string | undefined {
  return /^aws:\/\/\/[^/]*\/(i-[0-9a-zA-Z]+)$/.exec(providerId ?? '')?.[1];
}

/** A claim's EC2 instance id: its own, else the one its providerID names. */
export function instanceIdOfClaim(claim: { instanceId?: string; providerId?: string }): string | undefined {
  return claim.instanceId ?? instanceIdOfProviderId(claim.providerId);
}
