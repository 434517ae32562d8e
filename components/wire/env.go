package wire

// Environment variables pipectl reads or sets: every name that crosses into
// a program, a pod or pipectl itself is here, and nowhere else.
const (
	// EnvPrefix begins every variable of pipectl's own; a step may not
	// set one (the spec refuses it).
	EnvPrefix = "PIPECTL_"

	// EnvRunID and EnvStep give every step's program, locally and in a
	// pod, its run id and its step's name (STEP[i] for an iteration).
	EnvRunID = "PIPECTL_RUN_ID"
	EnvStep  = "PIPECTL_STEP"

	// EnvPodName, EnvPodUID and EnvPodNS give step, launcher and rank
	// containers their pod (the downward API); without POD_NAME the host
	// name stands in, which Kubernetes sets to the pod's name.
	EnvPodName = "POD_NAME"
	EnvPodUID  = "POD_UID"
	EnvPodNS   = "POD_NAMESPACE"

	// EnvRoot selects the artifact store root when no --artifacts flag is
	// given; the compiler sets it in every pod.
	EnvRoot = "PIPECTL_ARTIFACTS"

	// AWSPrefix begins the AWS SDKs' variables, which a step may not set.
	AWSPrefix = "AWS_"
	// EnvS3Endpoint is the AWS SDKs' S3-specific endpoint variable; it
	// wins over EnvEndpoint. The compiler sets it in pods (--s3-endpoint).
	EnvS3Endpoint = "AWS_ENDPOINT_URL_S3"
	// EnvEndpoint is the AWS SDKs' endpoint variable.
	EnvEndpoint = "AWS_ENDPOINT_URL"
	// EnvAccessKey, EnvSecretKey and EnvSessionToken are the S3
	// credentials (in pods from a Secret by reference, never inline).
	EnvAccessKey    = "AWS_ACCESS_KEY_ID"
	EnvSecretKey    = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken = "AWS_SESSION_TOKEN"
	// EnvRegion is the S3 region (EnvDefaultRegion when it is not set).
	EnvRegion        = "AWS_REGION"
	EnvDefaultRegion = "AWS_DEFAULT_REGION"
	// EnvS3Insecure, when true, skips TLS certificate verification.
	EnvS3Insecure = "PIPECTL_S3_INSECURE"
	// EnvDirectIO, when false, makes downloads use ordinary buffered writes.
	EnvDirectIO = "PIPECTL_DIRECT_IO"

	// EnvGSEndpoint, EnvGSAccessKey and EnvGSSecretKey are how gs:// URIs
	// are imported: an S3-compatible endpoint (Cloud Storage's XML API)
	// and an HMAC key.
	EnvGSEndpoint  = "PIPECTL_GS_ENDPOINT"
	EnvGSAccessKey = "PIPECTL_GS_ACCESS_KEY_ID"
	EnvGSSecretKey = "PIPECTL_GS_SECRET_ACCESS_KEY"

	// EnvInsecureRegistries lists registries (HOST[:PORT], comma-separated)
	// reached over plain HTTP when images are pinned.
	EnvInsecureRegistries = "PIPECTL_INSECURE_REGISTRIES"

	// EnvMetrics names the file a rank of a distributed step appends its
	// progress and scalar metrics to, one JSON object of numbers a line
	// ({"step": 120, "epoch": 2, "loss": 0.41}); every rank has its own.
	EnvMetrics = "PIPECTL_METRICS"

	// ProgressMarker starts the line a rank pod's runtime prints to the
	// pod's log, at most twice a second while a rank reports metrics, with
	// that rank's latest metrics and the points it reported since the last
	// such line as JSON ({"rank": 0, "lines": 120, "step": 120, "last":
	// {"loss": 0.41}, "points": [{"s": 120, "v": {"loss": 0.41}}]}): the
	// launcher counts it as the rank's progress, adds the points to the
	// step's series and does not show it.
	ProgressMarker = "#pipectl-progress "

	// RuntimeLinePrefix starts the lines a rank pod's runtime prints of its
	// own (a checkpoint restored or kept, the mpi node's daemons): the
	// launcher shows them, but they are not their rank's progress or last
	// line, as a local gang's own lines are not.
	RuntimeLinePrefix = "pipectl: "

	// EnvCheckpointDir names the checkpoint directory of a distributed
	// step's ranks: rank 0 writes its checkpoint there (each file written
	// under a name ending in .tmp or beginning with ".", then renamed);
	// pipectl keeps it in the artifact store and restores the latest one
	// before a gang restart, a retry or a rerun of the step.
	EnvCheckpointDir = "PIPECTL_CHECKPOINT_DIR"

	// EnvUIToken is the access token of `pipectl ui`.
	EnvUIToken = "PIPECTL_UI_TOKEN"
)

// EnvFramework gives a rank pod its distributed step's framework (torch,
// jax, xgboost, mpi; the rank environment of each is package rankenv's).
const EnvFramework = "PIPECTL_FRAMEWORK"
