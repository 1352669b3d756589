package build

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/andybalholm/brotli"
)

// The platform's own work on a tenant's files after the build —
// publishing a site (copying its files, precompressing them), packing and
// unpacking the build caches — runs outside the build's sandbox, and so outside its
// cgroup: it runs in a helper process (runHelper), the platform's binary started
// again with helperEnv set, which this package's init turns into the
// helper before anything else runs. The helper puts every thread of its
// own in the idle scheduling classes (CPU SCHED_IDLE, IO
// IOPRIO_CLASS_IDLE: it gets a core or the disk only when nothing else
// wants them) and runs on one core (GOMAXPROCS=1); being a process of
// its own, it shares no lock and no garbage collection with the edge, so
// lowering it cannot stall the platform (a thread of the gantry process
// in the idle class could: the runtime stops every thread, edge loops
// included, until it reaches a safe point). On top of that its work is
// bounded per deployment: MaxCompressTotal, MaxCachePacked.

// helperEnv names the variable that makes the binary the helper.
const helperEnv = "GANTRY_BUILD_HELPER"

func init() {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	os.Exit(helperMain(os.Stdin, os.Stdout))
}

// helperJob is one piece of work for the helper.
type helperJob struct {
	Op string `json:"op"` // "publish", "ingest", "pack" or "unpack"

	// publish: the folder Src as SitesDir/ID (publishTree), within the
	// bounds MaxBytes and BestBytes (compressBounds).
	Src       string `json:"src,omitempty"`
	SitesDir  string `json:"sitesDir,omitempty"`
	BlobDir   string `json:"blobDir,omitempty"`
	ID        string `json:"id,omitempty"`
	RepoRoot  bool   `json:"repoRoot,omitempty"`
	MaxBytes  int64  `json:"maxBytes,omitempty"`
	BestBytes int64  `json:"bestBytes,omitempty"`

	// ingest: the workspace Src into the blob store BlobDir as the folder
	// of links Base, owned by UID:GID, with ID's manifest (storeWorkspace).
	// pack: the folder Base/Rel into File (packCache); unpack: File into
	// Base/Rel, owned by UID:GID (unpackCache).
	Base  string   `json:"base,omitempty"`
	Rel   string   `json:"rel,omitempty"`
	Skip  []string `json:"skip,omitempty"`
	File  string   `json:"file,omitempty"`
	Limit int64    `json:"limit,omitempty"`
	UID   uint32   `json:"uid,omitempty"`
	GID   uint32   `json:"gid,omitempty"`
}

// helperAsset is a file to precompress and the variants it may get (none
// when the output already has a file of that name).
type helperAsset struct {
	Rel  string `json:"rel"`
	Size int64  `json:"size"`
	GZ   bool   `json:"gz"`
	BR   bool   `json:"br"`
}

// helperResult is what the helper did.
type helperResult struct {
	// publish: the published folder, its files, the files that could get
	// variants and those done (Done), what was skipped.
	Dir          string   `json:"dir,omitempty"`
	Files        int      `json:"files,omitempty"`
	Compressible int      `json:"compressible,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`

	Done     int    `json:"done"` // publish: files given variants
	Size     int64  `json:"size"` // publish, pack
	Stored   int64  `json:"stored"`
	NotExist bool   `json:"notExist,omitempty"` // pack: no folder to pack
	TooLarge bool   `json:"tooLarge,omitempty"` // pack: over Limit
	Err      string `json:"err,omitempty"`      // a failure, without the platform's paths
}

// helperMain reads a job from in, does it and writes the result to out.
func helperMain(in io.Reader, out io.Writer) int {
	idleProcess()
	var job helperJob
	if err := json.NewDecoder(in).Decode(&job); err != nil {
		fmt.Fprintln(os.Stderr, "build helper:", err)
		return 2
	}
	res := doHelperJob(job)
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return 2
	}
	return 0
}

// doHelperJob does job, in whatever process calls it.
func doHelperJob(job helperJob) helperResult {
	var res helperResult
	switch job.Op {
	case "publish":
		pub, err := publishTree(job.Src, job.SitesDir, job.BlobDir, job.ID, job.RepoRoot, bounds{job.MaxBytes, job.BestBytes}, func(w string) {
			switch n := len(res.Warnings); {
			case n < maxPublishWarnings:
				res.Warnings = append(res.Warnings, w)
			case n == maxPublishWarnings:
				res.Warnings = append(res.Warnings, "More files were skipped: only the first 100 are listed")
			}
		})
		if err != nil {
			res.Err = err.Error() // for the server log only
			break
		}
		res.Dir, res.Files, res.Size, res.Compressible, res.Done = pub.dir, pub.files, pub.size, pub.compressible, pub.compressed
	case "pack":
		size, stored, err := packCache(job.Base, job.Rel, job.Skip, job.File, job.Limit)
		res.Size, res.Stored = size, stored
		switch {
		case errors.Is(err, fs.ErrNotExist):
			res.NotExist = true
		case errors.Is(err, errCacheTooLarge):
			res.TooLarge = true
		case err != nil:
			res.Err = cacheErr(err)
		}
	case "ingest":
		if err := storeWorkspace(job.Src, job.Base, job.BlobDir, job.ID, job.UID, job.GID); err != nil {
			res.Err = err.Error() // for the server log only
		}
	case "unpack":
		if err := unpackCache(job.File, job.Base, job.Rel, job.UID, job.GID); err != nil {
			res.Err = cacheErr(err)
		}
	default:
		res.Err = "unknown job " + job.Op
	}
	return res
}

// Precompression's bounds per deployment: at most MaxCompressTotal bytes
// of files get variants, largest first (the others are served
// uncompressed), and brotli's slowest, best quality is spent on at most
// bestQualityTotal bytes of them. A build that writes 150,000 small
// scripts costs the machine what one writing 16 MiB of them does.
const (
	MaxCompressTotal = 16 << 20
	bestQualityTotal = 2 << 20
)

// bounds are precompression's bounds per deployment: bytes of files
// compressed, and of them compressed at brotli's best quality.
type bounds struct{ total, best int64 }

// compressBounds are the bounds publish gives the helper (tests lower
// them).
var compressBounds = bounds{MaxCompressTotal, bestQualityTotal}

// maxPublishWarnings caps the warnings of a publish (files skipped).
const maxPublishWarnings = 100

// compressAssets writes the .gz and .br variants of as (relative to dir),
// largest first, until b.total bytes of them are done (brotli's best
// quality for at most b.best) or the deadline has passed, and returns how
// many it did.
func compressAssets(dir string, as []helperAsset, deadline time.Time, b bounds) (done int, err error) {
	slices.SortStableFunc(as, func(a, b helperAsset) int { return cmp.Compare(b.Size, a.Size) })
	var total, best int64
	for _, a := range as {
		if total+a.Size > b.total {
			continue // a smaller one may still fit
		}
		if time.Now().After(deadline) {
			break
		}
		q := brotliQuality(int(a.Size))
		if q == brotli.BestCompression {
			if best+a.Size > b.best {
				q = 9
			} else {
				best += a.Size
			}
		}
		if err := compressFile(filepath.Join(dir, filepath.FromSlash(a.Rel)), a.GZ, a.BR, q); err != nil {
			return done, err
		}
		total += a.Size
		done++
	}
	return done, nil
}

// runHelperJob runs job in the helper process (in this one where there is
// none, see helper_other.go), killed when ctx ends.
func runHelperJob(ctx context.Context, job helperJob) (helperResult, error) {
	res, err := runHelper(ctx, job)
	if err == nil && res.Err != "" {
		err = errors.New(res.Err)
	}
	return res, err
}
