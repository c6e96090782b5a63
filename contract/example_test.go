package contract_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// A contract v1 request body on its way to a port: decoded, validated and
// converted; a malformed one is refused with the port's error.
func ExampleExecRequestToPort() {
	var body contract.ExecRequest
	if err := json.Unmarshal([]byte(`{"tool":"code_execution","input":{"code":"print(1)"},"timeout_seconds":5}`), &body); err != nil {
		fmt.Println(err)
		return
	}
	req, err := contract.ExecRequestToPort(body)
	fmt.Println(req.Tool, req.Code, req.Timeout, err)

	_ = json.Unmarshal([]byte(`{"tool":"code_execution","input":{}}`), &body)
	_, err = contract.ExecRequestToPort(body)
	fmt.Println(errors.Is(err, port.ErrInvalidRequest), port.ErrorCode(err))
	// Output:
	// code_execution print(1) 5s <nil>
	// true invalid_request
}
