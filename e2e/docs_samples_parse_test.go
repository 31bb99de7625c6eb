package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// docSample is one JSON object docs/api.md shows: a ```json block, or the
// answer to a curl command of a ```console block (whose method, path and
// status are then known).
type docSample struct {
	line   int
	method string // "" for a ```json block
	path   string
	status int
	value  map[string]any
}

// elided is the member a sample uses to say "and the rest": {"...": "..."}.
const elided = "..."

var (
	curlStatusLine = regexp.MustCompile(`(?m)^HTTP (\d{3})$`)
	curlURL        = regexp.MustCompile(`(?:localhost|127\.0\.0\.1):\d+(/[^\s'"]*)`)
)

// docSamples reads every JSON object sample of a Markdown document.
func docSamples(doc string) ([]docSample, error) {
	var (
		out   []docSample
		lang  string
		block []string
		start int
	)
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case lang == "" && strings.HasPrefix(line, "```") && len(line) > 3:
			lang, block, start = strings.TrimPrefix(line, "```"), nil, i+2
		case lang == "" && line == "```":
			lang, block = "plain", nil
		case lang != "" && line == "```":
			samples, err := blockSamples(lang, block, start)
			if err != nil {
				return nil, err
			}
			out = append(out, samples...)
			lang = ""
		case lang != "":
			block = append(block, line)
		}
	}
	return out, nil
}

// blockSamples reads the samples of one fenced block whose first line is
// line first of the document.
func blockSamples(lang string, block []string, first int) ([]docSample, error) {
	switch lang {
	case "json":
		var v map[string]any
		if err := json.Unmarshal([]byte(strings.Join(block, "\n")), &v); err != nil {
			return nil, fmt.Errorf("docs/api.md:%d: a json block that does not parse: %v", first, err)
		}
		return []docSample{{line: first, value: v}}, nil
	case "console":
		return consoleSamples(block, first)
	}
	return nil, nil
}

// consoleSamples reads a ```console block: commands start with "$ " (and
// go on while a line ends with "\"), each followed by its output.
func consoleSamples(block []string, first int) ([]docSample, error) {
	var out []docSample
	for i := 0; i < len(block); {
		if !strings.HasPrefix(block[i], "$ ") {
			i++
			continue
		}
		cmdLine := i
		cmd := block[i]
		for strings.HasSuffix(block[i], `\`) && i+1 < len(block) {
			i++
			cmd += "\n" + block[i]
		}
		i++
		outStart := i
		for i < len(block) && !strings.HasPrefix(block[i], "$ ") {
			i++
		}
		output := strings.Join(block[outStart:i], "\n")
		if !strings.Contains(cmd, "curl") || !strings.HasPrefix(strings.TrimSpace(output), "{") {
			continue
		}
		s := docSample{line: first + cmdLine, method: "GET", status: 200}
		if strings.Contains(cmd, " -d ") || strings.Contains(cmd, " -d'") {
			s.method = "POST"
		}
		m := curlURL.FindStringSubmatch(cmd)
		if m == nil {
			return nil, fmt.Errorf("docs/api.md:%d: a curl command without a localhost URL", s.line)
		}
		s.path, _, _ = strings.Cut(m[1], "?")
		if st := curlStatusLine.FindStringSubmatch(output); st != nil {
			s.status, _ = strconv.Atoi(st[1])
			output = output[:strings.Index(output, st[0])]
		}
		if err := json.Unmarshal([]byte(output), &s.value); err != nil {
			return nil, fmt.Errorf("docs/api.md:%d: the answer does not parse: %v", s.line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// routeOf returns the path template of api/openapi.yaml that path matches,
// preferring literal segments to parameters (/v1/intents/batch over
// /v1/intents/{intentId}).
func routeOf(doc *openapi3.T, path string) string {
	best, bestLiterals := "", -1
	segs := strings.Split(path, "/")
	for tmpl := range doc.Paths.Map() {
		t := strings.Split(tmpl, "/")
		if len(t) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i := range t {
			switch {
			case strings.HasPrefix(t[i], "{"):
			case t[i] == segs[i]:
				literals++
			default:
				ok = false
			}
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = tmpl, literals
		}
	}
	return best
}

// answerSchema names the schema of the answer an operation gives with a
// status, from api/openapi.yaml.
func answerSchema(doc *openapi3.T, method, route string, status int) (string, error) {
	item := doc.Paths.Find(route)
	if item == nil || item.GetOperation(method) == nil {
		return "", fmt.Errorf("%s %s is not in api/openapi.yaml", method, route)
	}
	res := item.GetOperation(method).Responses.Status(status)
	if res == nil || res.Value == nil {
		return "", fmt.Errorf("%s %s does not answer %d in api/openapi.yaml", method, route, status)
	}
	for _, mt := range res.Value.Content {
		if mt.Schema != nil && mt.Schema.Ref != "" {
			return schemaName(mt.Schema.Ref), nil
		}
	}
	return "", fmt.Errorf("%s %s %d has no JSON schema", method, route, status)
}

func schemaName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

// objectAt is one JSON object of an answer or sample, labelled with its
// schema and its place.
type objectAt struct {
	schema string
	where  string
	keys   []string
	elided bool
}

// objects walks v as an instance of the schema name, returning it and every
// object nested in it whose schema api/openapi.yaml names by reference.
func objects(doc *openapi3.T, name, where string, v map[string]any) []objectAt {
	o := objectAt{schema: name, where: where}
	for k := range v {
		if k == elided {
			o.elided = true
			continue
		}
		o.keys = append(o.keys, k)
	}
	slices.Sort(o.keys)
	out := []objectAt{o}
	props := doc.Components.Schemas[name].Value.Properties
	for _, k := range o.keys {
		prop := props[k]
		if prop == nil {
			continue
		}
		switch child := v[k].(type) {
		case map[string]any:
			if prop.Ref != "" {
				out = append(out, objects(doc, schemaName(prop.Ref), where+"."+k, child)...)
			}
		case []any:
			if prop.Value.Items != nil && prop.Value.Items.Ref != "" {
				for i, item := range child {
					if m, ok := item.(map[string]any); ok {
						out = append(out, objects(doc, schemaName(prop.Value.Items.Ref), fmt.Sprintf("%s.%s[%d]", where, k, i), m)...)
					}
				}
			}
		}
	}
	return out
}

// classify names the one schema a ```json sample is an instance of: every
// member a property, every required property present.
func classify(doc *openapi3.T, v map[string]any) []string {
	var fits []string
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		if len(s.Properties) == 0 {
			continue
		}
		ok := true
		for k := range v {
			ok = ok && (k == elided || s.Properties[k] != nil)
		}
		for _, r := range s.Required {
			_, has := v[r]
			ok = ok && (has || v[elided] != nil)
		}
		if ok {
			fits = append(fits, name)
		}
	}
	slices.Sort(fits)
	return fits
}
