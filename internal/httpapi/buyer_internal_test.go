package httpapi

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestActForWithoutBuyerOnly: a route that forgot the middleware fails
// closed, with an error no row of the table names (500), never a pass.
func TestActForWithoutBuyerOnly(t *testing.T) {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	err := actFor(c, "alice")
	if err == nil {
		t.Fatal("actFor without buyerOnly = nil, want an error")
	}
	if errors.Is(err, errForbidden) || errors.Is(err, errUnauthorized) {
		t.Errorf("actFor without buyerOnly = %v, want an internal error", err)
	}
	if got, want := kindOf(err).status, 500; got != want {
		t.Errorf("status = %d, want %d", got, want)
	}
}
