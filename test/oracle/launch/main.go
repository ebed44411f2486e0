// Command launch-oracle runs Karpenter's AWS provider (github.com/aws/karpenter-provider-aws, as a
// module dependency) on one launch scenario read from stdin (--lines: one per line) and prints what
// the provider would send to EC2: the CreateLaunchTemplate inputs and the CreateFleet input. The
// account (subnets, security groups, images, SSM parameters) is served by the provider's own fake
// EC2 and SSM APIs (pkg/fake); see README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/patrickmn/go-cache"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	clock "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/aws/karpenter-provider-aws/pkg/apis"
	v1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	awscache "github.com/aws/karpenter-provider-aws/pkg/cache"
	kubeletcel "github.com/aws/karpenter-provider-aws/pkg/cel"
	"github.com/aws/karpenter-provider-aws/pkg/controllers/nodeclass"
	"github.com/aws/karpenter-provider-aws/pkg/fake"
	"github.com/aws/karpenter-provider-aws/pkg/operator/options"
	"github.com/aws/karpenter-provider-aws/pkg/providers/amifamily"
	"github.com/aws/karpenter-provider-aws/pkg/providers/arczonalshift"
	"github.com/aws/karpenter-provider-aws/pkg/providers/capacityreservation"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instance"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
	"github.com/aws/karpenter-provider-aws/pkg/providers/launchtemplate"
	"github.com/aws/karpenter-provider-aws/pkg/providers/placementgroup"
	"github.com/aws/karpenter-provider-aws/pkg/providers/securitygroup"
	ssmp "github.com/aws/karpenter-provider-aws/pkg/providers/ssm"
	"github.com/aws/karpenter-provider-aws/pkg/providers/subnet"
	"github.com/aws/karpenter-provider-aws/pkg/test"
	"github.com/aws/karpenter-provider-aws/pkg/utils"
)

// Scenario is one launch: the EC2NodeClass, the NodeClaim, its instance types' offerings, the cluster and the account.
type Scenario struct {
	Cluster struct {
		Name              string `json:"name"`
		Endpoint          string `json:"endpoint"`
		CABundle          string `json:"caBundle"`
		ServiceCIDR       string `json:"serviceCidr"`
		KubeDNSIP         string `json:"kubeDnsIp"`
		KubernetesVersion string `json:"kubernetesVersion"`
	} `json:"cluster"`
	NodeClass       json.RawMessage  `json:"nodeClass"`
	NodeClaim       karpv1.NodeClaim `json:"nodeClaim"`
	InstanceTypes   []InstanceType   `json:"instanceTypes"`
	InstanceProfile string           `json:"instanceProfile"`
	Account         Account          `json:"account"`
}

// InstanceType names a type of the provider's fake DescribeInstanceTypes and its offerings.
type InstanceType struct {
	Name      string     `json:"name"`
	Offerings []Offering `json:"offerings"`
}

type Offering struct {
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
}

// Account is what DescribeSubnets / DescribeSecurityGroups / DescribeImages and SSM GetParameter answer from.
type Account struct {
	ID             string                   `json:"id"`
	Subnets        []ec2types.Subnet        `json:"subnets"`
	SecurityGroups []ec2types.SecurityGroup `json:"securityGroups"`
	Images         []ec2types.Image         `json:"images"`
	SSMParameters  map[string]string        `json:"ssmParameters"`
}

// Output is what the provider sent.
type Output struct {
	LaunchTemplates []*ec2.CreateLaunchTemplateInput `json:"launchTemplates"`
	CreateFleet     *ec2.CreateFleetInput            `json:"createFleet,omitempty"`
	Status          *v1.EC2NodeClassStatus           `json:"status,omitempty"`
	Error           string                           `json:"error,omitempty"`
}

// accountEC2 is the provider's fake EC2 answering the scenario's account only: its Describe* calls
// filter the account's resources with the fake's own filters (the fake's defaults never answer),
// and DescribeImages also applies Owners (the fake ignores them).
type accountEC2 struct {
	*fake.EC2API
	account Account
}

func (a *accountEC2) DescribeSubnets(_ context.Context, in *ec2.DescribeSubnetsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	out := lo.Filter(a.account.Subnets, func(s ec2types.Subnet, _ int) bool {
		return (len(in.SubnetIds) == 0 || lo.Contains(in.SubnetIds, aws.ToString(s.SubnetId))) && len(fake.FilterDescribeSubnets([]ec2types.Subnet{s}, in.Filters)) == 1
	})
	return &ec2.DescribeSubnetsOutput{Subnets: out}, nil
}

func (a *accountEC2) DescribeSecurityGroups(_ context.Context, in *ec2.DescribeSecurityGroupsInput, _ ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	return &ec2.DescribeSecurityGroupsOutput{SecurityGroups: fake.FilterDescribeSecurtyGroups(a.account.SecurityGroups, in.Filters)}, nil
}

func (a *accountEC2) DescribeImages(_ context.Context, in *ec2.DescribeImagesInput, _ ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	// EC2 matches a name filter with * and ? wildcards (the fake compares names exactly).
	var rest []ec2types.Filter
	images := a.account.Images
	for _, f := range in.Filters {
		if aws.ToString(f.Name) != "name" {
			rest = append(rest, f)
			continue
		}
		images = lo.Filter(images, func(img ec2types.Image, _ int) bool {
			return lo.SomeBy(f.Values, func(v string) bool { ok, _ := path.Match(v, aws.ToString(img.Name)); return ok })
		})
	}
	out := lo.Filter(fake.FilterDescribeImages(images, rest), func(img ec2types.Image, _ int) bool {
		if len(in.ImageIds) > 0 && !lo.Contains(in.ImageIds, aws.ToString(img.ImageId)) {
			return false
		}
		if len(in.Owners) == 0 {
			return true
		}
		return lo.SomeBy(in.Owners, func(o string) bool {
			return o == aws.ToString(img.OwnerId) || o == aws.ToString(img.ImageOwnerAlias) || (o == "self" && aws.ToString(img.OwnerId) == a.account.ID)
		})
	})
	return &ec2.DescribeImagesOutput{Images: out}, nil
}

// defaulted applies the EC2NodeClass CRD's defaults (the provider's own CRD, with the API server's
// structural defaulting), as the API server does before Karpenter reads the object.
func defaulted(raw json.RawMessage) (*v1.EC2NodeClass, error) {
	crd := apis.CRDs[0]
	var schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1" {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(schema, internal, nil); err != nil {
		return nil, err
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	structuraldefaulting.Default(obj, ss)
	b, _ := json.Marshal(obj)
	nc := &v1.EC2NodeClass{}
	if err := json.Unmarshal(b, nc); err != nil {
		return nil, err
	}
	return nc, nil
}

type fixedVersion string

func (v fixedVersion) Get(context.Context) string { return string(v) }

func run(s *Scenario) (out Output) {
	defer func() {
		if r := recover(); r != nil {
			out.Error = fmt.Sprintf("panic: %v", r)
		}
	}()
	out.LaunchTemplates = []*ec2.CreateLaunchTemplateInput{}
	ctx := coreoptions.ToContext(context.Background(), coretest.Options())
	ctx = options.ToContext(ctx, test.Options(test.OptionsFields{ClusterName: lo.ToPtr(s.Cluster.Name), ClusterEndpoint: lo.ToPtr(s.Cluster.Endpoint)}))
	clk := clock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	newCache := func() *cache.Cache { return cache.New(awscache.DefaultTTL, awscache.DefaultCleanupInterval) }

	fakeEC2 := fake.NewEC2API()
	ec2api := &accountEC2{EC2API: fakeEC2, account: s.Account}
	ssmapi := fake.NewSSMAPI()
	ssmapi.Parameters = lo.Assign(map[string]string{"/nodefleet/none": "none"}, s.Account.SSMParameters)

	subnetProvider := subnet.NewDefaultProvider(ec2api, newCache(), cache.New(awscache.AvailableIPAddressTTL, awscache.DefaultCleanupInterval))
	sgProvider := securitygroup.NewDefaultProvider(ec2api, newCache())
	ssmProvider := ssmp.NewDefaultProvider(ssmapi, newCache())
	amiProvider := amifamily.NewDefaultProvider(clk, fixedVersion(s.Cluster.KubernetesVersion), ssmProvider, ec2api, newCache())
	pgProvider := placementgroup.NewProvider(ec2api, newCache(), cache.New(awscache.PlacementGroupAvailabilityTTL, awscache.DefaultCleanupInterval))
	celEnv := lo.Must(kubeletcel.NewEnvironment())
	crProvider := capacityreservation.NewProvider(ec2api, clk, newCache(), cache.New(24*time.Hour, awscache.DefaultCleanupInterval))
	zsProvider := arczonalshift.NewProvider(fake.NewARCZonalShiftAPI(), clk, "")
	itResolver := instancetype.NewDefaultResolver(fake.DefaultRegion, celEnv)

	// ENI limits of the fake's instance types (AL2023 max pods).
	infos := lo.Must(fakeEC2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{})).InstanceTypes
	infoByName := lo.SliceToMap(infos, func(i ec2types.InstanceTypeInfo) (string, ec2types.InstanceTypeInfo) {
		return string(i.InstanceType), i
	})
	amiResolver := amifamily.NewDefaultResolver(fake.DefaultRegion, func(name string) (amifamily.ENILimits, bool) {
		info, ok := infoByName[name]
		if !ok || info.NetworkInfo == nil || info.NetworkInfo.DefaultNetworkCardIndex == nil {
			return amifamily.ENILimits{}, false
		}
		// The default network card's interfaces and the IPv4 addresses per interface (what the
		// provider's instance type provider reads from the same DescribeInstanceTypes answer).
		card := info.NetworkInfo.NetworkCards[lo.FromPtr(info.NetworkInfo.DefaultNetworkCardIndex)]
		return amifamily.ENILimits{DefaultENIs: int(lo.FromPtr(card.MaximumNetworkInterfaces)), IPv4PerENI: int(lo.FromPtr(info.NetworkInfo.Ipv4AddressesPerInterface))}, true
	}, celEnv)

	ltProvider := launchtemplate.NewDefaultProvider(ctx, newCache(), ec2api, fake.NewEKSAPI(), amiResolver, sgProvider, subnetProvider, pgProvider,
		lo.ToPtr(s.Cluster.CABundle), make(chan struct{}), net.ParseIP(s.Cluster.KubeDNSIP), s.Cluster.Endpoint)
	ltProvider.CABundle = lo.ToPtr(s.Cluster.CABundle)
	ltProvider.ClusterCIDR.Store(lo.ToPtr(s.Cluster.ServiceCIDR))
	ltProvider.KubeDNSIP = net.ParseIP(s.Cluster.KubeDNSIP)
	ltProvider.ClusterEndpoint = s.Cluster.Endpoint
	instanceProvider := instance.NewDefaultProvider(ctx, fake.DefaultRegion, coretest.NewEventRecorder(), ec2api, awscache.NewUnavailableOfferings(),
		subnetProvider, ltProvider, crProvider, pgProvider, zsProvider, cache.New(cache.NoExpiration, cache.NoExpiration))

	// The EC2NodeClass status, as the provider's nodeclass reconcilers write it.
	nc, err := defaulted(s.NodeClass)
	if err != nil {
		out.Error = "nodeClass: " + err.Error()
		return out
	}
	if _, err := nodeclass.NewSubnetReconciler(clk, subnetProvider).Reconcile(ctx, nc); err != nil {
		out.Error = "subnets: " + err.Error()
		return out
	}
	if _, err := nodeclass.NewSecurityGroupReconciler(clk, sgProvider).Reconcile(ctx, nc); err != nil {
		out.Error = "security groups: " + err.Error()
		return out
	}
	if _, err := nodeclass.NewAMIReconciler(clk, amiProvider).Reconcile(ctx, nc); err != nil {
		out.Error = "amis: " + err.Error()
		return out
	}
	nc.Status.InstanceProfile = lo.Ternary(nc.Spec.InstanceProfile != nil, lo.FromPtr(nc.Spec.InstanceProfile), s.InstanceProfile)
	out.Status = &nc.Status
	for _, c := range []string{v1.ConditionTypeSubnetsReady, v1.ConditionTypeSecurityGroupsReady, v1.ConditionTypeAMIsReady} {
		if cond := nc.StatusConditions().Get(c); cond != nil && cond.IsFalse() {
			out.Error = fmt.Sprintf("%s: %s", c, cond.Message)
			return out
		}
	}

	parsed, err := v1.ParseKubeletConfig(nc.KubeletConfiguration())
	if err != nil {
		out.Error = "kubelet: " + err.Error()
		return out
	}
	// Offerings exist only in the zones of the class's subnets (the provider's instance type
	// provider derives offering zones from nodeClass.Status.Subnets).
	zoneIDs := lo.SliceToMap(nc.Status.Subnets, func(s v1.Subnet) (string, string) { return s.Zone, s.ZoneID })
	var its []*cloudprovider.InstanceType
	for _, t := range s.InstanceTypes {
		info, ok := infoByName[t.Name]
		if !ok {
			out.Error = fmt.Sprintf("instance type %s is not in the provider's fake DescribeInstanceTypes", t.Name)
			return out
		}
		offerings := lo.Filter(t.Offerings, func(o Offering, _ int) bool { _, ok := zoneIDs[o.Zone]; return ok })
		zones := lo.Uniq(lo.Map(offerings, func(o Offering, _ int) string { return o.Zone }))
		it, err := itResolver.Resolve(ctx, info, zones, nc, parsed)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		for _, o := range offerings {
			it.Offerings = append(it.Offerings, &cloudprovider.Offering{
				Requirements: scheduling.NewLabelRequirements(map[string]string{
					karpv1.CapacityTypeLabelKey: o.CapacityType, corev1.LabelTopologyZone: o.Zone, v1.LabelTopologyZoneID: zoneIDs[o.Zone],
				}),
				Price:     o.Price,
				Available: true,
			})
		}
		its = append(its, it)
	}

	tags, err := utils.GetTags(nc, &s.NodeClaim, s.Cluster.Name)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	_, err = instanceProvider.Create(ctx, nc, &s.NodeClaim, tags, its)
	fakeEC2.CreateLaunchTemplateBehavior.CalledWithInput.ForEach(func(in *ec2.CreateLaunchTemplateInput) { out.LaunchTemplates = append(out.LaunchTemplates, in) })
	sort.Slice(out.LaunchTemplates, func(i, j int) bool {
		return aws.ToString(out.LaunchTemplates[i].LaunchTemplateName) < aws.ToString(out.LaunchTemplates[j].LaunchTemplateName)
	})
	if fakeEC2.CreateFleetBehavior.CalledWithInput.Len() > 0 {
		out.CreateFleet = fakeEC2.CreateFleetBehavior.CalledWithInput.At(0)
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

func main() {
	lines := len(os.Args) > 1 && os.Args[1] == "--lines"
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	one := func(text string) {
		var s Scenario
		var o Output
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			o = Output{Error: "scenario: " + err.Error()}
		} else {
			o = run(&s)
		}
		b, _ := json.Marshal(o)
		fmt.Fprintln(w, string(b))
		w.Flush()
	}
	if !lines {
		var sb strings.Builder
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			sb.WriteString(sc.Text())
			sb.WriteString("\n")
		}
		one(sb.String())
		return
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			one(sc.Text())
		}
	}
}
