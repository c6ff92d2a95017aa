import{c as r,s as e}from"./flowDiagram-HODETNUW.QhhkkQG5.js";import{_ as a}from"../app.ChwAVaPI.js";import"./chunk-5VM5RSS4.D-Gnq2_O.js";import"./chunk-XXDRQBXY.tBh6i0sF.js";import"./chunk-POPQ4Y6H.BGdNPIgO.js";import"./chunk-F27PBJKO.DlV91Jz8.js";import"./channel.Bj8HWyms.js";import"./framework.B0A-Gppi.js";import"./theme.CSuuxDt6.js";var o=a(t=>`${e(t)}
  .swimlane.cluster rect {
    stroke: ${t.clusterBorder} !important;
  }
  [data-look="neo"].cluster rect {
    filter: none;
  }
`,"getStyles"),m=o,y=r({defaultLayout:"swimlane",styles:m});export{y as diagram};
