package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// maxBodyBytes caps every request body. The largest valid body (a product)
// is a few hundred bytes; 16 KiB leaves room and still stops a client from
// making the server buffer megabytes.
const maxBodyBytes = 16 << 10

// decodeJSON reads c's body into dst strictly: the Content-Type must be
// application/json, the body at most maxBodyBytes, one JSON object whose
// fields all exist in dst with the right types, and nothing after it.
// Every failure is an invalid_argument error whose message says what was
// wrong and, where it can, with which field. dst must be a pointer to a
// struct; required fields should be pointers so the caller can tell a
// missing field from a zero value.
func decodeJSON(c *gin.Context, dst any) error {
	if err := checkContentType(c.GetHeader("Content-Type")); err != nil {
		return err
	}
	body := http.MaxBytesReader(c.Writer, c.Request.Body, maxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return describeDecodeError(err)
	}
	// A second value after the object ("{...} {...}" or "{...} x") is
	// not one JSON object either.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return describeDecodeError(err)
		}
		return invalidBody("body must hold exactly one JSON object, found more after it")
	}
	return nil
}

// checkContentType accepts application/json with any parameters
// (charset=utf-8 is common) and nothing else.
func checkContentType(header string) error {
	if header == "" {
		return invalidBody("Content-Type header missing: send application/json")
	}
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil || mediaType != "application/json" {
		return invalidBody("Content-Type must be application/json, got %q", header)
	}
	return nil
}

// describeDecodeError turns encoding/json's errors into client messages.
func describeDecodeError(err error) error {
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
		maxErr    *http.MaxBytesError
	)
	switch {
	case errors.As(err, &maxErr):
		return invalidBody("body larger than %d bytes", maxBodyBytes)
	case errors.Is(err, io.EOF):
		return invalidBody("body is empty: send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidBody("malformed JSON: body ends in the middle of a value")
	case errors.As(err, &syntaxErr):
		return invalidBody("malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return invalidBody("body must be a JSON object, got a JSON %s", typeErr.Value)
		}
		return invalid(typeErr.Field, "must be %s, got a JSON %s", jsonTypeName(typeErr.Type.String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no error type for this one; the message is
		// `json: unknown field "name"` and stable since Go 1.10.
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return invalid(strings.Trim(field, `"`), "unknown field")
	default:
		return invalidBody("malformed JSON: %v", err)
	}
}

// jsonTypeName names a Go destination type the way a JSON client thinks of it.
func jsonTypeName(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch goType {
	case "string":
		return "a string"
	case "int", "int64", "int32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "true or false"
	default:
		return "a " + goType
	}
}

// required reports a missing field when p is nil. Request structs use
// pointers for required fields so that "quantity": 0 and a missing
// quantity are told apart.
func required[T any](field string, p *T) error {
	if p == nil {
		return invalid(field, "required")
	}
	return nil
}
