import { render } from "preact"; render(<div>hi</div>, document.getElementById("app")!);
