// Built once when the Go base image is bootstrapped: its test binary imports what most tests
// do, so the build cache starts with that part of the standard library compiled.
package warm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var _ = []any{bufio.NewReader, bytes.NewReader, context.Background, json.Marshal, errors.New,
	fmt.Sprint, io.EOF, math.Abs, httptest.NewRecorder, os.Getenv, filepath.Join, reflect.TypeOf,
	regexp.MustCompile, sort.Strings, strconv.Itoa, strings.Cut, sync.NewCond, time.Now}

func TestWarm(t *testing.T) {}
