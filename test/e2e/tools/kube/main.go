// Command kube is the test bed's Kubernetes control plane in one binary: the first
// argument names the component, the rest are its own flags.
//
//	kube kube-apiserver ARGS...           k8s.io/kubernetes/cmd/kube-apiserver
//	kube kube-controller-manager ARGS...  k8s.io/kubernetes/cmd/kube-controller-manager
//	kube kube-scheduler ARGS...           k8s.io/kubernetes/cmd/kube-scheduler with the
//	                                      Coscheduling plugin of sigs.k8s.io/scheduler-plugins
//
// Each branch is the upstream main of that command (same command constructor, same
// registrations), so the Kubernetes module graph is compiled and linked once instead
// of once per component. The scheduler is scheduler-plugins' cmd/scheduler with the
// one plugin the test bed configures (Coscheduling): with no --config it runs the
// default profile (default-scheduler), as kube-scheduler does; the test bed's
// coscheduling scheduler is a second process given a profile that enables the plugin.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // for CronJob time zones, as in kube-apiserver's and kube-controller-manager's mains

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	"sigs.k8s.io/scheduler-plugins/pkg/coscheduling"

	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme" // the plugins' config types, as scheduler-plugins' main loads them
)

var commands = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler": func() *cobra.Command {
		return scheduler.NewSchedulerCommand(scheduler.WithPlugin(coscheduling.Name, coscheduling.New))
	},
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: kube kube-apiserver|kube-controller-manager|kube-scheduler [FLAGS...]")
		os.Exit(2)
	}
	// The component sees itself as the program, with its own arguments.
	os.Args = os.Args[1:]
	os.Exit(cli.Run(commands[os.Args[0]]()))
}
